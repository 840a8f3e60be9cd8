"""An answer that resizes a layer holding trained weights is rejected, however it says it
(issue 16, LLM-answer review finding 4: the issue's own named harm).

A BERT-style matmul "(768x16 and 768x3072)" with ``BertModel.from_pretrained(...)`` in the
logs: "Set `in_features=16` on the intermediate Linear layer" passed, because the pretrained
premise was read only when an answer restated the runbook's resize step. A layer nothing shows
the user built (``layer-origin-not-shown``) in a model loaded with trained weights, or loaded
quantized, loses them when resized. A new head the user builds on a pretrained backbone is
theirs to resize.
"""

from __future__ import annotations

from typing import Any

import pytest

from ingest.parsing.frames import make_frame
from ingest.parsing.shapes import extract_shape_diff
from rca.suggestion.context import AnalysisContext
from rca.suggestion.layer_width import BUILT
from rca.suggestion.premises import read_premises
from rca.suggestion.validation import validate
from tests.support.evidence import draft, evidence
from tests.support.frames import TORCH_LINEAR

_RUNBOOK = "matmul-shape-mismatch-linear"
_TRANSPOSED = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (768x16 and 768x3072)"
_WIDER = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (256x4096 and 768x320)"
_PRETRAINED = 'model = BertModel.from_pretrained("bert-base-uncased")'
_QUANTIZED = "model = AutoModelForCausalLM.from_pretrained(path, load_in_4bit=True)"
#: The user's own head on a pretrained backbone: their frame builds the layer.
_OWN_HEAD = [
    make_frame("/home/me/train.py", "<module>", 20, context_line="head = nn.Linear(768, 2)"),
    make_frame("/home/me/net.py", "forward", 31, context_line="return self.head(x)"),
    TORCH_LINEAR,
]
_RESIZES = {
    _TRANSPOSED: [
        "Set `in_features=16` on the intermediate Linear layer.",
        "Update the Linear layer's `in_features` to the input size (16).",
    ],
    _WIDER: [
        "Set `in_features=4096` on the first Linear layer so it matches the input.",
        "Update the Linear layer's `in_features` to the input size (4096).",
        "Make the first linear layer accept 4096 features (`in_features=4096`) instead of 768.",
        "Set `in_features=4096` on the Linear layer.",
        "Change the first Linear layer from 768 to 4096 input features.",
        "Resize the first linear layer to take 4096 inputs.",
    ],
}
_CASES = [(message, action) for message, actions in _RESIZES.items() for action in actions]


def _ctx(message: str, logs: tuple[str, ...] = (), frames: list[Any] | None = None) -> Any:
    return AnalysisContext(
        error_type="RuntimeError",
        message=message,
        shape_diff=extract_shape_diff(message),
        frames=frames or [],
        logs=[{"message": line} for line in logs],
        evidence=evidence((_RUNBOOK, 0.9)),
    )


def _premises_ok(action: str, ctx: Any) -> bool:
    return validate(draft(action, _RUNBOOK, "The widths differ."), ctx).premises_ok


@pytest.mark.parametrize(("message", "action"), _CASES)
@pytest.mark.parametrize("loaded", [_PRETRAINED, _QUANTIZED], ids=["pretrained", "quantized"])
def test_resizing_a_layer_with_trained_weights_is_rejected(message, action, loaded):
    ctx = _ctx(message, (loaded,))
    complaints = validate(draft(action, _RUNBOOK, "The widths differ."), ctx).complaints
    assert not _premises_ok(action, ctx), complaints
    assert any("discards its trained weights" in c for c in complaints), complaints


@pytest.mark.parametrize(("message", "action"), _CASES)
def test_the_users_own_head_on_a_pretrained_backbone_may_be_resized(message, action):
    ctx = _ctx(message, (_PRETRAINED,), _OWN_HEAD)
    assert BUILT in read_premises(ctx).facts
    assert _premises_ok(action, ctx)


@pytest.mark.parametrize(
    "action",
    [
        "Transpose the input with `x = x.transpose(0, 1)` so it is 16x768 before the Linear layer.",
        "Transpose the hidden states (`x.T`) so the 768 features are the last dimension.",
    ],
)
def test_fixing_the_input_of_a_pretrained_layer_is_accepted(action):
    assert _premises_ok(action, _ctx(_TRANSPOSED, (_PRETRAINED,)))


@pytest.mark.parametrize(
    "action",
    [
        "Use matching model files instead of setting `in_features=4096`.",
        "Load the checkpoint made for this architecture rather than changing `in_features`.",
    ],
)
def test_an_answer_that_turns_the_resize_down_is_not_a_resize(action):
    assert _premises_ok(action, _ctx(_WIDER, (_PRETRAINED,)))
