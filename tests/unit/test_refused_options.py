"""An answer that refuses or keeps an option the incident shows set is not setting it again.

PyTorch says "Since `find_unused_parameters=True` is enabled, this likely means that not all
`forward` outputs participate in computing loss". The right answer fixes the forward pass and
often says so against the option: "instead of setting it again", "do not set it again",
"keeping it as is". The option reader turns those down with the project's negation reader
(:mod:`rca.suggestion.negated_clauses`) and reads "keep"/"leave"/"as is" as leaving it; an
answer that does set it, however it is worded around, still fails (issue 16, review finding 2).
"""

from __future__ import annotations

import pytest

from rca.suggestion.negated_clauses import said_parts
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context

ALREADY_ON = (
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting"
    " a new one. This error indicates that your module has parameters that were not used in"
    " producing loss. Since `find_unused_parameters=True` is enabled, this likely  means that"
    " not all `forward` outputs participate in computing loss."
)
SLUG = "ddp-unused-parameters"


def _premises_ok(action: str) -> bool:
    ctx = message_context(ALREADY_ON, (SLUG, 0.9))
    return validate(draft(action, SLUG, "DDP waits for every parameter."), ctx).premises_ok


@pytest.mark.parametrize(
    "action",
    [
        "Make every forward output contribute to the loss instead of setting"
        " `find_unused_parameters=True` again.",
        "Make every forward output contribute to the loss rather than passing"
        " `find_unused_parameters=True`.",
        "Make every forward output contribute to the loss; do not set"
        " `find_unused_parameters=True` again.",
        "Make every forward output contribute to the loss; setting"
        " `find_unused_parameters=True` again will not help.",
        "Make every forward output contribute to the loss instead of toggling"
        " `find_unused_parameters=True`.",
        "Return only the outputs used by the loss from `forward`, keeping"
        " `find_unused_parameters=True` as is.",
        "Check which parameters are unused with `TORCH_DISTRIBUTED_DEBUG=DETAIL`; keep"
        " `find_unused_parameters=True`.",
        "Leave `find_unused_parameters=True` unchanged and make every forward output"
        " contribute to the loss.",
        "Keep `find_unused_parameters=True` as is and make every forward output contribute"
        " to the loss.",
        "Make every forward output contribute to the loss; leave `find_unused_parameters=True`"
        " as it is, for now.",
    ],
)
def test_refusing_or_keeping_the_option_shown_set_is_no_repeat(action: str) -> None:
    assert _premises_ok(action)


@pytest.mark.parametrize(
    "action",
    [
        "Set `find_unused_parameters=True` instead of removing the unused layers.",
        "Keep the model as is and set `find_unused_parameters=True` in DDP.",
        "Do not change the model; set `find_unused_parameters=True`.",
        "Don't forget to set `find_unused_parameters=True` when wrapping the model.",
        "Never fail to pass `find_unused_parameters=True` to DDP.",
        # "as is done in ..." compares: it leaves nothing as it is (re-review finding 14)
        "Keep DDP but set `find_unused_parameters=True` as is done in the example.",
        "Set `find_unused_parameters=True` as is shown in the PyTorch docs.",
    ],
)
def test_setting_it_again_still_fails_whatever_surrounds_it(action: str) -> None:
    assert not _premises_ok(action)


def test_a_negated_omission_says_what_it_governs() -> None:
    assert said_parts("Don't forget to set the flag") == ["Don't forget to set the flag"]
    assert said_parts("Never skip updating the driver") == ["Never skip updating the driver"]
    assert said_parts("Do not update the driver") == []
