"""In "change/replace `X=old` to/with new" the old value is what is replaced, not what is set
(re-review finding 6).

PyTorch tells a DDP user with unused parameters to pass `find_unused_parameters=True`; the
logs show the model wrapped with `find_unused_parameters=False`. "Change
`find_unused_parameters=False` to `True`" is the fix, and was rejected as setting the logged
False again. An answer whose new value is the one already set still fails.
"""

from __future__ import annotations

import pytest

from rca.suggestion.step_options import options_set_by
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context

MESSAGE = (
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting"
    " a new one. This error indicates that your module has parameters that were not used in"
    " producing loss. You can enable unused parameter detection by (1) passing the keyword"
    " argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`;"
)
LOGGED = "model = DDP(model, device_ids=[rank], find_unused_parameters=False)"
SLUG = "ddp-unused-parameters"


def _premises_ok(action: str) -> bool:
    ctx = message_context(MESSAGE, (SLUG, 0.9), logs=(LOGGED,))
    return validate(draft(action, SLUG, "DDP waits for every parameter."), ctx).premises_ok


@pytest.mark.parametrize(
    "action",
    [
        "Change `find_unused_parameters=False` to `True` in the DDP constructor.",
        "Replace `find_unused_parameters=False` with `find_unused_parameters=True`.",
        "Switch `find_unused_parameters=False` to `True` when wrapping the model.",
        "Set `find_unused_parameters=True` instead of `False` in the DDP call.",
    ],
)
def test_replacing_the_logged_value_is_no_repeat(action: str) -> None:
    assert _premises_ok(action)


@pytest.mark.parametrize(
    "action",
    [
        "Set `find_unused_parameters=False` in the DDP constructor.",
        "Change `find_unused_parameters=True` to `False` in the DDP constructor.",
        "Replace `find_unused_parameters=True` with `find_unused_parameters=False`.",
    ],
)
def test_setting_the_logged_value_again_still_fails(action: str) -> None:
    assert not _premises_ok(action)


def test_the_new_value_is_what_the_option_reader_reads() -> None:
    options = options_set_by("Change `lr=0.1` to `0.01` in the optimizer.")
    assert [(o.key, o.value) for o in options] == [("lr", "0.01")]
