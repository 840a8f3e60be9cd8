"""A number an answer gives to a setting of the run is no tensor dimension (issue 16, fresh
probe).

On a position-embedding mismatch (2545 tokens for BERT's 512) "Lower the batch size to 1"
was rejected for naming a tensor dimension the shapes lack ("not in it: 1"): the rule read
"size to 1" as a size. 83ed52f made option values no dimensions (``max_tokens=5000``); the
same holds for prose ("batch size to 1", "8 workers", "the LoRA rank to 16") and for option
names with a setting noun though "size" is another part (``--tensor-parallel-size 2``).
The nouns are data (``rca/knowledge/setting-quantities.toml``).
"""

from __future__ import annotations

import pytest

from rca.suggestion.checks.dimensions import named_dims
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

_C047 = (
    "RuntimeError: The size of tensor a (2545) must match the size of tensor b (512) at"
    " non-singleton dimension 1"
)
_MATMUL = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)"


def _dimension_complaints(action: str, message: str) -> list[str]:
    ctx = message_context(message, ("seq-too-long-position-embeddings", 0.9))
    answer = draft(action, "seq-too-long-position-embeddings", "Smaller batches use less memory.")
    return [c for c in validate(answer, ctx).complaints if c.startswith("name tensor dim")]


@pytest.mark.parametrize(
    "action",
    [
        "Lower the batch size to 1.",
        "Reduce the batch size from 32 to 8.",
        "Use a batch size of 4 per GPU.",
        "Set --batch-size 8 on the launcher.",
        "Set per_device_train_batch_size=16 in the arguments.",
        "Lower the data loader to 8 workers.",
        "Set the LoRA rank to 16.",
        "Pass --tensor-parallel-size 2 to the server.",
        "Set the seed to 42 and retry 3 times.",
        "Use beam size 4.",
    ],
)
def test_a_settings_value_in_prose_is_not_a_tensor_dimension(action: str) -> None:
    assert _dimension_complaints(action, _C047) == []


@pytest.mark.parametrize(
    ("action", "dims"),
    [
        ("Set in_features to 256 and retry 3 times.", {256}),
        ("Reshape the batch to (4, 300).", {4, 300}),
        ("Set the hidden size to 768.", {768}),
        ("Truncate the input to 510 tokens.", {510}),
    ],
)
def test_sizes_stay_dimensions_next_to_settings(action: str, dims: set[int]) -> None:
    assert named_dims(action) == dims


def test_a_made_up_size_still_fails_beside_a_setting() -> None:
    assert _dimension_complaints("Reshape the input to (4, 300) with batch size 4.", _MATMUL)


def test_reading_setting_values_is_linear() -> None:
    assert_linear(lambda size: named_dims("batch size " * size + "1 workers 2 " * size), 100, 4000)
