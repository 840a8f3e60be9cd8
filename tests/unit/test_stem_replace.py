"""Rebuilding an RGB stem for a grayscale or RGBA input fails, in any wording (issue 16:
"Replace model.conv1 with nn.Conv2d(1, 64, kernel_size=7, ...)" and "Replace the first conv
with nn.Conv2d(1, 64, 7, ...)" passed on "weight of size [64, 3, 7, 7], expected input[64, 1,
224, 224] to have 3 channels"). The same for a Linear constructor put in a trained layer's
place (layer_resize reads assignments and "swap ... for" now)."""

from __future__ import annotations

import pytest

from ingest.parsing.shapes import extract_shape_diff
from rca.suggestion.checks.layer_resize import changes_layer_width
from rca.suggestion.checks.stem_replace import stem_replace_violations
from rca.suggestion.context import AnalysisContext
from rca.suggestion.validation import validate
from tests.support.evidence import draft, evidence

_RUNBOOK = "conv-channel-mismatch-grayscale-rgba"
_GRAY = (
    "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[64, 1, 224, 224]"
    " to have 3 channels, but got 1 channels instead"
)
_RGBA = (
    "RuntimeError: Given groups=1, weight of size [32, 3, 3, 3], expected input[8, 4, 128, 128]"
    " to have 3 channels, but got 4 channels instead"
)


def _ok(message: str, action: str) -> bool:
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message=message,
        shape_diff=extract_shape_diff(message),
        frames=[],
        logs=[],
        evidence=evidence((_RUNBOOK, 0.9)),
    )
    return validate(draft(action, _RUNBOOK, "The channels differ."), ctx).premises_ok


@pytest.mark.parametrize(
    ("message", "action"),
    [
        (
            _GRAY,
            "Replace model.conv1 with nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3,"
            " bias=False).",
        ),
        (_GRAY, "Replace the first conv with nn.Conv2d(1, 64, 7, stride=2, padding=3)."),
        (_GRAY, "Set model.conv1 = nn.Conv2d(in_channels=1, out_channels=64, kernel_size=7)."),
        (_GRAY, "Change the first convolution's in_channels from 3 to 1."),
        (_GRAY, "Swap the stem for `torch.nn.Conv2d(1, 64, 7, 2, 3)` so the batch fits."),
        (_RGBA, "Redefine the first layer as nn.Conv2d(4, 32, 3) to take the alpha channel."),
    ],
)
def test_rebuilding_the_stem_fails(message: str, action: str) -> None:
    assert not _ok(message, action)


@pytest.mark.parametrize(
    ("message", "action"),
    [
        (_GRAY, "Convert the grayscale batch to three channels with x = x.repeat(1, 3, 1, 1)."),
        (
            _GRAY,
            "Replace conv1 with nn.Conv2d(1, 64, 7) and fine-tune the model on the grayscale data.",
        ),
        (
            _GRAY,
            "Create the model with timm.create_model('resnet50', pretrained=True, in_chans=1).",
        ),
        (_GRAY, "Don't replace conv1 with nn.Conv2d(1, 64, 7); convert the images to RGB."),
        (_RGBA, "Load the images with Image.open(p).convert('RGB') so each has 3 channels."),
    ],
)
def test_converting_the_input_passes(message: str, action: str) -> None:
    assert _ok(message, action)


def test_no_channel_fact_no_complaint() -> None:
    assert stem_replace_violations("Replace conv1 with nn.Conv2d(1, 64, 7).", set()) == []


@pytest.mark.parametrize(
    "action",
    [
        "model.fc = nn.Linear(512, 10)",
        "Swap the head for nn.Linear(768, 2).",
        "Give the head a new nn.Linear(100, 5).",
        "Substitute `nn.Linear(1, 256)` for the first layer.",
    ],
)
def test_a_linear_constructor_in_a_layers_place_changes_its_width(action: str) -> None:
    assert changes_layer_width(action)


@pytest.mark.parametrize(
    "action",
    [
        "Reshape x = x.view(x.size(0), -1) before the Linear(2048, 10) head.",
        "Don't set model.fc = nn.Linear(1, 10); flatten the input.",
    ],
)
def test_no_constructor_put_in_place(action: str) -> None:
    assert not changes_layer_width(action)
