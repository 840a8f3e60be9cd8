"""An answer that strips a key prefix is judged by what it does to the keys shown, however it
says so, and is matched to the step that does what it does (issue 16, LLM-answer review
findings 1, 5 and 11).

The review's canonical right answer on a DataParallel checkpoint ("Strip the `module.`
prefix from the checkpoint keys before calling `load_state_dict`") was held to the
nested-checkpoint step it shares "checkpoint ... before `load_state_dict`" with; and a
strip spelled without the word "prefix" ("remove `module.` from the key names", ``k[7:]``,
torch's ``consume_prefix_in_state_dict_if_present``) passed where the keys shown lack the
prefix, or carry it on both sides, exactly where "strip the `module.` prefix" fails.
"""

from __future__ import annotations

import pytest

from rca.suggestion.restated_steps import restated
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context

_RUNBOOK = "checkpoint-keys-module-prefix"
#: rw007 (dev): a DataParallel save loaded into a bare model; only the file's keys carry it.
_WRAPPED_SAVE = (
    "RuntimeError: Error(s) in loading state_dict for DTNet:\n\tMissing key(s) in state_dict:"
    ' "projection.0.weight", "recur_block.0.0.conv1.weight", "head.0.weight", "head.2.weight".'
    ' \n\tUnexpected key(s) in state_dict: "module.projection.0.weight",'
    ' "module.recur_block.0.0.conv1.weight", "module.head.0.weight", "module.head.2.weight".'
)
_STRIPS = [
    "Strip the `module.` prefix from the checkpoint keys before calling `load_state_dict`.",
    "Remove the `module.` prefix from the checkpoint keys before calling `load_state_dict`.",
    "Strip `module.` from the checkpoint keys before `model.load_state_dict(sd)`.",
    "Strip the `module.` prefix from the checkpoint keys before calling `model.load_state_dict`.",
    "Strip the module. prefix from the checkpoint keys before calling load_state_dict.",
    "Remove the `module.` prefix from the state dict keys before"
    " `model.load_state_dict(state_dict)`.",
    "Strip `module.` from each checkpoint key before calling `load_state_dict`:"
    " `sd = {k[7:]: v for k, v in sd.items()}`.",
]


def _premises_ok(action: str, message: str) -> bool:
    ctx = message_context(message, (_RUNBOOK, 0.9), ("checkpoint-non-strict-buffers", 0.8))
    return validate(draft(action, _RUNBOOK, "DataParallel saved the keys."), ctx).premises_ok


@pytest.mark.parametrize("action", _STRIPS)
def test_stripping_the_prefix_a_wrapped_save_added_is_accepted(action: str) -> None:
    assert _premises_ok(action, _WRAPPED_SAVE)


def test_an_answer_is_matched_to_the_step_that_does_what_it_does() -> None:
    """Sharing "checkpoint ... before `load_state_dict`" with the nested-checkpoint step is not
    restating it: that step unwraps, the answer strips."""
    ctx = message_context(_WRAPPED_SAVE, (_RUNBOOK, 0.9))
    found = restated(draft(_STRIPS[0], _RUNBOOK), ctx)
    assert found is None or "Unwrap" not in found[1]
    unwrap = 'Unwrap the nested checkpoint (`sd = ckpt["state_dict"]`) before `load_state_dict`.'
    found = restated(draft(unwrap, _RUNBOOK), ctx)
    assert found is not None and "Unwrap" in found[1]
    assert not _premises_ok(unwrap, _WRAPPED_SAVE)
