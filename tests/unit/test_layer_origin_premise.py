"""A layer nothing shows the user built is not resized by the offline provider (issue 16).

"mat1 and mat2 shapes cannot be multiplied (256x4096 and 768x320)" posted with no traceback
(a ComfyUI user mixing an SDXL text encoder with an SD 1.5 model, Comfy-Org/ComfyUI#5836) was
told "Set the layer's `in_features` to 4096": a resize of a pretrained cross-attention layer,
which throws its weights away and hides the mismatched components. The shapes alone cannot say
whose layer it is; a resize is then a guess that destroys trained weights whenever the layer
is not the user's, so the offline provider's resize steps carry ``layer-origin-not-shown`` in
``unless`` and a step that harms nothing is chosen. A quantized model's layers hold trained
weights too (``model-already-quantized``). Alone, neither is a harm rule for an LLM's answer
(with trained weights loaded it is: tests/unit/test_pretrained_layer_resize.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from ingest.parsing.frames import make_frame
from ingest.parsing.shapes import extract_shape_diff
from rca.suggestion.checks.layer_resize import changes_layer_width
from rca.suggestion.context import AnalysisContext
from rca.suggestion.layer_width import BUILT, ORIGIN_NOT_SHOWN
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import evidence
from tests.support.frames import LIBRARY_FORWARD, USER_FORWARD, library_forward

MATMUL = "RuntimeError: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})"
#: The linear runbook alone: whichever of its steps is chosen, it is the step choice tested.
LINEAR = (("matmul-shape-mismatch-linear", 0.9),)
#: A library's attention layer run from the user's pipeline call.
LIBRARY_ATTENTION = library_forward(
    "somelib/attention.py", "key = self.to_k(context)", "image = pipe(prompt)"
)
#: Shapes of public threads and of the runbook's own symptom lines (rows, width, layer, out).
SHAPES = [(256, 4096, 768, 320), (64, 9216, 4096, 10), (32, 4096, 768, 10), (1, 44, 30, 64)]


def _ctx(message: str, frames: list[Any] | None = None, logs: tuple[str, ...] = ()) -> Any:
    return AnalysisContext(
        error_type="RuntimeError",
        message=message,
        shape_diff=extract_shape_diff(message),
        frames=frames or [],
        logs=list(logs),
        evidence=evidence(*LINEAR),
    )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    "frames",
    [None, LIBRARY_FORWARD, LIBRARY_ATTENTION],
    ids=["message-only", "library", "attention"],
)
def test_no_resize_when_nothing_shows_the_layer_is_the_users(shape, frames):
    ctx = _ctx(MATMUL.format(*shape), frames)
    facts = read_premises(ctx).facts
    assert ORIGIN_NOT_SHOWN in facts and BUILT not in facts
    suggestion = OfflineProvider().suggest(ctx)
    assert not changes_layer_width(suggestion.action), suggestion.action
    assert validate(suggestion, ctx).ok


@pytest.mark.parametrize("shape", SHAPES)
def test_the_users_own_layer_keeps_the_resize(shape):
    ctx = _ctx(MATMUL.format(*shape), USER_FORWARD)
    facts = read_premises(ctx).facts
    assert BUILT in facts and ORIGIN_NOT_SHOWN not in facts
    assert changes_layer_width(OfflineProvider().suggest(ctx).action)


def test_a_quantized_models_layer_is_not_resized():
    """bitsandbytes' 4-bit path (lllyasviel/Omost#44): the user's frames run the layer, but
    the weight is a quantized one, trained weights a resize would discard."""
    message = MATMUL.format(332, 4096, 1, 8388608)
    line = "output = torch.nn.functional.linear(A, F.dequantize_4bit(B, quant_state).t(), bias)"
    frames = [
        make_frame("/home/me/net.py", "forward", 31, context_line="x = self.fc1(x)"),
        make_frame("/home/me/net.py", "forward", 40, context_line=line),
    ]
    ctx = _ctx(message, frames)
    assert {"model-already-quantized", BUILT} <= read_premises(ctx).facts
    assert not changes_layer_width(OfflineProvider().suggest(ctx).action)


def test_an_llm_answer_that_resizes_is_not_rejected_for_an_unshown_origin():
    """Not a harm rule: the incident cannot show the resize is wrong, only that it is a guess."""
    ctx = _ctx(MATMUL.format(256, 4096, 768, 320))
    answer = Draft(
        "If `fc1` is your own layer, set its `in_features` to 4096.",
        "The layer's input width must match the 4096 features it receives.",
        "matmul-shape-mismatch-linear",
        0.7,
        "openai",
        "test-llm",
    )
    assert validate(answer, ctx).premises_ok


@pytest.mark.parametrize(
    "line",
    [
        "model.head = nn.Linear(1024, 5)",
        "self.classifier = nn.Linear(1024, num_labels)",
        "model.fc = torch.nn.Linear(1024, 5)",
    ],
)
def test_a_head_the_logs_show_the_user_building_may_be_resized(line: str) -> None:
    """Re-review (issue 16): the user's own new head on a pretrained backbone, shown in the
    logs rather than the frames, was read as a layer of unknown origin and its resize failed."""
    loads = 'model = timm.create_model("vit_base_patch16_224", pretrained=True)'
    ctx = _ctx(MATMUL.format(16, 768, 1024, 5), logs=(loads, line))
    assert BUILT in read_premises(ctx).facts
    answer = Draft(
        "Set `in_features=768` on the new `head` you assign.",
        "The backbone gives 768 features.",
        "matmul-shape-mismatch-linear",
        0.7,
        "openai",
        "test-llm",
    )
    assert validate(answer, ctx).premises_ok


def test_a_printed_module_is_not_the_user_building_a_layer() -> None:
    printed = ("VisionTransformer(", "  (head): Linear(in_features=1024, out_features=5)")
    facts = read_premises(_ctx(MATMUL.format(16, 768, 1024, 5), logs=printed)).facts
    assert BUILT not in facts and ORIGIN_NOT_SHOWN in facts
