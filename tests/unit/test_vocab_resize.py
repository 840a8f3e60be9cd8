"""A vocabulary size given ``resize_token_embeddings`` that the incident derives is no made-up
tensor dimension (issue 16, must-show 7: right answers rejected by the dimension rule): the
diff's 32000 rows plus the 2 tokens the logs say were added, one past an index error's largest
id, or a known size rounded up to the call's ``pad_to_multiple_of``. A size nothing derives
still fails."""

from __future__ import annotations

import pytest

from rca.suggestion.checks.dimensions import unknown_dims
from rca.suggestion.checks.stated_numbers import incident_numbers
from rca.suggestion.checks.vocab_resize import vocab_resize_numbers
from rca.suggestion.context import AnalysisContext
from rca.suggestion.validation import validate
from tests.support.evidence import draft, evidence

_DIFF = [
    {
        "tensor": "model.embed_tokens.weight",
        "op": "load_state_dict",
        "expected": [32000, 4096],
        "actual": [32001, 4096],
    }
]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("Call model.resize_token_embeddings(32002) before loading.", "Added 2 special tokens"),
        ("Resize to the tokenizer's 32002 entries: model.resize_token_embeddings(32002).", ""),
        ("Use model.resize_token_embeddings(32064, pad_to_multiple_of=64) before loading.", ""),
        ("Call model.resize_token_embeddings(new_num_tokens=32001).", ""),
        ("Call model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=128).", ""),
    ],
)
def test_derived_vocabulary_sizes_are_grounded(action: str, message: str) -> None:
    assert unknown_dims(action, _DIFF, (), incident_numbers(message, [])) == set()


@pytest.mark.parametrize(
    ("action", "unknown"),
    [
        ("Call model.resize_token_embeddings(50000) before loading.", {50000}),
        ("Reshape the input to (4, 300) and call model.resize_token_embeddings(32001).", {4, 300}),
        ("Set the hidden size to 5120 and call model.resize_token_embeddings(32001).", {5120}),
    ],
)
def test_sizes_nothing_derives_stay_unknown(action: str, unknown: set[int]) -> None:
    assert unknown_dims(action, _DIFF, (), set()) == unknown


def test_only_the_calls_argument_is_read() -> None:
    assert vocab_resize_numbers("Set vocab to 32002 rows.", {32000, 4096}) == set()


def test_validation_accepts_the_derived_size() -> None:
    message = (
        "RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM: size mismatch for"
        " model.embed_tokens.weight: copying a param with shape torch.Size([32002, 4096]) from"
        " checkpoint, the shape in current model is torch.Size([32000, 4096])."
    )
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message=message,
        shape_diff=[
            {
                "tensor": "model.embed_tokens.weight",
                "op": "load_state_dict",
                "expected": [32000, 4096],
                "actual": [32002, 4096],
            }
        ],
        frames=[],
        logs=[{"message": "Added 2 special tokens; vocabulary rounded to a multiple of 64"}],
        evidence=evidence(("checkpoint-size-mismatch-vocab", 0.9)),
    )
    action = "Call model.resize_token_embeddings(32064, pad_to_multiple_of=64) before loading."
    check = validate(draft(action, "checkpoint-size-mismatch-vocab", "Vocabulary grew."), ctx)
    assert not any("tensor dimensions" in c for c in check.complaints), check.complaints
