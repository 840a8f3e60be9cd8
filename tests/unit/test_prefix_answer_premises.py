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

from rca.suggestion.key_prefix_sides import prefix_moves
from rca.suggestion.restated_steps import restated
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

_RUNBOOK = "checkpoint-keys-module-prefix"
#: rw007 (dev): a DataParallel save loaded into a bare model; only the file's keys carry it.
_WRAPPED_SAVE = (
    "RuntimeError: Error(s) in loading state_dict for DTNet:\n\tMissing key(s) in state_dict:"
    ' "projection.0.weight", "recur_block.0.0.conv1.weight", "head.0.weight", "head.2.weight".'
    ' \n\tUnexpected key(s) in state_dict: "module.projection.0.weight",'
    ' "module.recur_block.0.0.conv1.weight", "module.head.0.weight", "module.head.2.weight".'
)
#: rk004 (dev): one buffer extra, no prefix at all.
_BUFFER = (
    "RuntimeError: Error(s) in loading state_dict for HFEncoder:\n        Unexpected key(s) in"
    ' state_dict: "transformer.embeddings.position_ids".'
)
#: The review's variant of rk004: a DataParallel model, so both sides carry `module.`.
_BOTH_SIDES = _BUFFER.replace("HFEncoder", "DataParallel").replace('"trans', '"module.trans')
#: rk008 (dev): the model's keys carry `module.`, the file's do not.
_MODEL_SIDE = (
    'Missing key(s) in state_dict "module.encoders.0.basic_module.SingleConv1.conv.weight"\n'
    'Unexpected key(s) in state_dict "encoders.0.basic_module.SingleConv1.conv.weight"'
)
#: rk002 (dev): a BatchNorm counter in every layer, no prefix.
_COUNTERS = (
    "RuntimeError: Error(s) in loading state_dict for MSC:\n\tUnexpected key(s) in state_dict:"
    ' "scale.layer1.conv1.bn.num_batches_tracked", "scale.layer2.block1.reduce.bn.'
    'num_batches_tracked", "scale.layer2.block1.conv3x3.bn.num_batches_tracked"'
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
_OTHER_WORDS = [
    "Strip the leading `module.` from each key.",
    "Remove `module.` from the key names.",
    "Fix the key names by stripping `module.` from each one.",
    "Rename the keys by removing `module.` before loading.",
    'Use `consume_prefix_in_state_dict_if_present(sd, "module.")` before loading.',
    "Rename every key with `k[7:]` before `load_state_dict`.",
    "Rename the state_dict keys by stripping the leading `module.` (`k[7:]`) before loading.",
    'Rename the keys with `key[len("module."):]` before loading.',
    # re-review: a cut at the first dot, however the code spells it
    "Use `{k.split('.', 1)[1]: v for k, v in sd.items()}` before loading.",
    "Use `{'.'.join(k.split('.')[1:]): v for k, v in sd.items()}` before loading.",
    "Rename the keys with `k.partition('.')[2]` before `load_state_dict`.",
]


def _premises_ok(action: str, message: str) -> bool:
    ctx = message_context(message, (_RUNBOOK, 0.9), ("checkpoint-non-strict-buffers", 0.8))
    return validate(draft(action, _RUNBOOK, "DataParallel saved the keys."), ctx).premises_ok


@pytest.mark.parametrize("action", _STRIPS + _OTHER_WORDS)
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


@pytest.mark.parametrize("message", [_BUFFER, _BOTH_SIDES, _MODEL_SIDE, _COUNTERS])
@pytest.mark.parametrize("action", ["Strip the `module.` prefix from the keys.", *_OTHER_WORDS])
def test_a_strip_in_any_words_fails_where_the_keys_shown_do_not_call_for_it(
    action: str, message: str
) -> None:
    """Stripping `module.` where no key differs by it renames keys that already match (both
    sides prefixed) or nothing at all; ``k[7:]`` on unprefixed keys cuts 7 characters off
    each."""
    assert not _premises_ok(action, message)


@pytest.mark.parametrize(
    "action",
    [
        "Do not strip any prefix; load with `strict=False` since only `position_ids` is extra.",
        "Load with `strict=False` rather than renaming keys (e.g. stripping `module.`).",
    ],
)
def test_a_strip_the_answer_turns_down_is_not_its_move(action: str) -> None:
    assert prefix_moves(action) == []


def test_reading_a_strip_is_linear() -> None:
    def read(size: int) -> object:
        return prefix_moves("strip the `" + "a." * size + "k[" * size)

    assert_linear(read, 100, 4000)
