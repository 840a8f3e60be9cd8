"""An answer that reshapes a conv's input channels-last fails when the message states a
channels-first conv weight (issue 16, fresh probe: rt010).

PyTorch's message states the weight (``... for 4-dimensional weight 3 3 1 1, but got
3-dimensional input of size [3, 256, 256]``); a weight ``[out, in, k...]`` takes
``[N, in, ...]``. "Reshape the input to (1, 256, 256, 3) channels-last" passed: its rank is
right, its axis 1 holds 256.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rca.suggestion.checks.conv_layout import channels_last_violations
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

_RT010 = (
    "RuntimeError: Expected 4-dimensional input for 4-dimensional weight 3 3 1 1, but got"
    " 3-dimensional input of size [3, 256, 256] instead"
)
_NHWC = (
    "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[8, 224, 224, 3]"
    " to have 3 channels, but got 224 channels instead"
)
#: Dev case c020's message: a channels-first conv fed one channel.
_C020 = (
    "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[64, 1, 224, 224]"
    " to have 3 channels, but got 1 channels instead"
)
_RUNBOOK = "conv-channel-mismatch-layout"


def _layout_complaints(action: str, message: str) -> list[str]:
    ctx = message_context(message, (_RUNBOOK, 0.9))
    result = validate(draft(action, _RUNBOOK, "A lone image lacks the batch axis."), ctx)
    return [c for c in result.complaints if "channels last" in c]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("Reshape the input to (1, 256, 256, 3) channels-last.", _RT010),
        ("Reshape the image to [1, 256, 256, 3] before the forward pass.", _RT010),
        ("Keep the batch as (8, 224, 224, 3) and call the model.", _NHWC),
    ],
)
def test_a_channels_last_target_fails(action: str, message: str) -> None:
    assert _layout_complaints(action, message)


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("Index the image as x[None] so its shape becomes (1, 3, 256, 256).", _RT010),
        ("Add a batch dimension with low_cont.unsqueeze(0) before the forward pass.", _RT010),
        ("Permute the batch to (8, 3, 224, 224) with x.permute(0, 3, 1, 2).", _NHWC),
        ("Resize the image to 128x128.", _RT010),
    ],
)
def test_a_channels_first_target_or_none_passes(action: str, message: str) -> None:
    assert _layout_complaints(action, message) == []


@pytest.mark.parametrize(
    "action",
    [
        "Convert the input from NHWC (64, 224, 224, 3) to NCHW (64, 3, 224, 224) with"
        " x.permute(0, 3, 1, 2) before the conv.",
        "Permute the batch so a (64, 224, 224, 3) batch becomes (64, 3, 224, 224).",
        "Permute the batch from (64, 224, 224, 3) to (64, 3, 224, 224).",
        "Reshape so the batch becomes (64, 3, 224, 224) instead of (64, 224, 224, 3).",
        "Do not reshape to (64, 224, 224, 3); permute to (64, 3, 224, 224).",
        "Permute to (64, 3, 224, 224), not (64, 224, 224, 3).",
        "Permute x (64, 224, 224, 3) -> (64, 3, 224, 224) before the conv.",
        "Do not call x.permute(0, 2, 3, 1); the conv takes (64, 3, 224, 224).",
        "Reshape with x.reshape(64, 3, 224, 224) instead of x.permute(0, 2, 3, 1).",
    ],
)
def test_a_channels_last_shape_named_as_the_source_or_what_to_avoid_passes(action: str) -> None:
    """Re-review of dev case c020: the channels-last shape is where the answer starts from, or
    what it turns down; its target keeps the channels at axis 1."""
    assert _layout_complaints(action, _C020) == []


@pytest.mark.parametrize(
    "action",
    [
        "Reshape the batch to (64, 224, 224, 3) to feed the conv.",
        "Convert the batch from (64, 3, 224, 224) to (64, 224, 224, 3).",
        "Make the (64, 1, 224, 224) batch become (64, 224, 224, 3).",
        "Permute the input with x.permute(0, 2, 3, 1) before the conv.",
    ],
)
def test_a_channels_last_target_still_fails_beside_a_source(action: str) -> None:
    assert _layout_complaints(action, _C020)


def test_a_permute_back_after_a_channels_first_one_claims_nothing() -> None:
    action = (
        "Feed x.permute(0, 3, 1, 2) to the conv and view the output with y.permute(0, 2, 3, 1)."
    )
    assert _layout_complaints(action, _C020) == []


def test_grouped_transposed_and_single_channel_weights_claim_nothing() -> None:
    grouped = _RT010.replace("weight 3 3 1 1", "weight 32 3 3 3")
    assert channels_last_violations("Reshape to (1, 6, 256, 3).", grouped) == []
    assert channels_last_violations("Reshape to (1, 32, 256, 3).", grouped) == []
    gray = _RT010.replace("weight 3 3 1 1", "weight 16 1 3 3")
    assert channels_last_violations("Reshape to (1, 256, 256, 1).", gray) == []


def test_no_conv_weight_in_the_message_claims_nothing() -> None:
    message = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)"
    assert channels_last_violations("Reshape to (1, 256, 256, 3).", message) == []


@given(st.text(max_size=300))
def test_arbitrary_answers_never_raise(action: str) -> None:
    assert isinstance(channels_last_violations(action, _RT010), list)


def test_reading_shapes_is_linear() -> None:
    assert_linear(lambda size: channels_last_violations("(1, " * size + "3)", _RT010), 100, 4000)
