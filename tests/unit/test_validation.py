"""The suggestion validator: format, grounding, code locations and tensor dimensions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.parsing.frames import make_frame
from ingest.parsing.shapes import ShapeDiff
from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.validation import (
    code_locations,
    format_ok,
    grounded,
    named_dims,
    shape_incompatibility,
    stack_path_match,
    unknown_dim_share,
    validate,
)

FRAMES = [
    make_frame("/srv/app/train.py", "main", 12, in_app=True),
    make_frame("/srv/app/models/net.py", "forward", 88, module="app.models.net", in_app=True),
    make_frame("/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", "forward", 116),
]
MATMUL = ShapeDiff(tensor=None, op="matmul", expected=[None, 512], actual=[4, 256])


@dataclass
class _Answer:
    action: str
    reason: str
    runbook: str


def _ctx(**overrides: Any) -> AnalysisContext:
    values: dict[str, Any] = dict(
        error_type="RuntimeError",
        message="mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        frames=FRAMES,
        shape_diff=[MATMUL],
        evidence=[Evidence("matmul-shape-mismatch-linear", "Linear", "matmul_shape_mismatch", "")],
    )
    values.update(overrides)
    return AnalysisContext(**values)


@pytest.mark.parametrize(
    "action",
    [
        "Set in_features of the first Linear layer to 256.",
        "Wrap the inference call in `torch.no_grad()`.",
        "Re-export the model with opset 17.",
        "`Reduce` the batch size.",
    ],
)
def test_imperative_action_with_object_is_well_formed(action: str) -> None:
    assert format_ok(action, "Because the weight has 512 input columns.") == (True, "")


@pytest.mark.parametrize(
    ("action", "reason", "problem"),
    [
        ("The layer is too small.", "x", "imperative verb"),
        ("Setting in_features to 256.", "x", "imperative verb"),
        ("Restart.", "x", "object"),
        ("Set in_features to 256. Then retrain the head.", "x", "single sentence"),
        ("Set in_features to 256.", "", "reason is missing"),
        ("", "x", "action is missing"),
        ("Set " + "x" * 200, "x", "within 200"),
        ("Set in_features to 256.", "y" * 401, "within 400"),
    ],
)
def test_malformed_answer_is_rejected_with_the_problem_named(
    action: str, reason: str, problem: str
) -> None:
    ok, message = format_ok(action, reason)
    assert not ok
    assert problem in message


def test_abbreviations_do_not_count_as_a_second_sentence() -> None:
    assert format_ok("Load the model in half precision, e.g. Float16 weights.", "x")[0]


def test_only_a_retrieved_runbook_counts_as_grounded() -> None:
    assert grounded("matmul-shape-mismatch-linear", ["matmul-shape-mismatch-linear"])
    assert not grounded("made-up-runbook", ["matmul-shape-mismatch-linear"])
    assert not grounded("", ["matmul-shape-mismatch-linear"])
    assert not grounded(None, ["matmul-shape-mismatch-linear"])


def test_code_locations_finds_files_lines_and_functions_named_as_places() -> None:
    text = (
        "Fix net.py:88 and src/train.py:main, the check inside function `build_head` "
        "and the loop in `Trainer.step()`."
    )
    assert code_locations(text) == [
        "net.py:88",
        "src/train.py:main",
        "build_head",
        "Trainer.step()",
    ]


def test_library_apis_and_code_snippets_are_not_code_locations() -> None:
    text = (
        "Wrap the call in `torch.no_grad()` and strip the prefix with "
        "`sd = {k.removeprefix('module.'): v for k, v in sd.items()}` on torch 2.1."
    )
    assert code_locations(text) == []


def test_locations_named_as_in_the_frames_match_fully() -> None:
    text = "The layer in models/net.py:88 (function forward) is called from train.py:main."
    assert stack_path_match(text, FRAMES) == 1.0


def test_wrong_line_number_does_not_match_the_frames() -> None:
    assert stack_path_match("Edit net.py:91.", FRAMES) == 0.0
    assert stack_path_match("Edit net.py:88 and loader.py:5.", FRAMES) == 0.5


def test_suggestion_naming_no_location_scores_a_full_match() -> None:
    assert stack_path_match("Reduce the batch size.", FRAMES) == 1.0
    assert stack_path_match("Reduce the batch size.", []) == 1.0


def test_shape_incompatibility_is_the_worst_diff_and_zero_without_diffs() -> None:
    rank_change = ShapeDiff(tensor="x", op="input", expected=[None, 28, 28, 1], actual=[28, 28])
    assert shape_incompatibility([MATMUL, rank_change]) == 1.0
    assert 0 < shape_incompatibility([MATMUL]) < 1
    assert shape_incompatibility([]) == 0.0


def test_named_dims_reads_shapes_and_cued_sizes() -> None:
    text = "Got [4, 256] (4x256) where dim 512 and in_features=768 are expected; pad to 1024."
    assert named_dims(text) == {4, 256, 512, 768, 1024}


def test_named_dims_ignores_versions_percentages_lines_and_quantities() -> None:
    text = (
        "Upgrade to torch 2.1 or version 4 of the API, keep memory under 90%, see "
        "net.py:88 and line 77, load 8-bit weights on 2 GPUs with 16 GiB, flatten(x, 1)."
    )
    assert named_dims(text) == set()


def test_unknown_dim_share_counts_dimensions_outside_the_diff() -> None:
    assert unknown_dim_share("Set in_features to 256 instead of 512.", [MATMUL]) == 0.0
    assert unknown_dim_share("Set in_features to 256 instead of 1024.", [MATMUL]) == 0.5
    assert unknown_dim_share("Set in_features to 1024.", []) == 0.0
    assert unknown_dim_share("Reduce the batch size.", [MATMUL]) == 0.0


def test_grounded_specific_suggestion_validates() -> None:
    answer = _Answer(
        "Set in_features of the layer in net.py:forward to 256.",
        "The input has 256 features but the weight expects 512.",
        "matmul-shape-mismatch-linear",
    )
    result = validate(answer, _ctx())
    assert result.ok
    assert result.complaints == []
    assert result.as_dict() == {
        "format_ok": True,
        "grounded": True,
        "stack_path_match": 1.0,
        "shape_incompatibility": shape_incompatibility([MATMUL]),
        "unknown_dim_share": 0.0,
        "ok": True,
        "complaints": [],
        "urls_grounded": True,
        "premises_ok": True,
        "placeholders_ok": True,
    }


def test_each_failed_check_adds_a_complaint_the_model_can_act_on() -> None:
    answer = _Answer(
        "The fix is in trainer.py:301 with 2048 features.",
        "Width 4096 vs 8192.",
        "invented-slug",
    )
    result = validate(answer, _ctx())
    assert not result.ok
    assert not result.format_ok and not result.grounded
    assert result.stack_path_match == 0.0
    assert result.unknown_dim_share == 1.0
    joined = " ".join(result.complaints)
    assert "imperative verb" in joined
    assert "matmul-shape-mismatch-linear" in joined and "invented-slug" in joined
    assert "trainer.py:301" in joined
    assert "2048" in joined and "256" in joined


@given(st.text(max_size=2000))
def test_any_text_is_checked_without_error_and_scores_stay_in_range(text: str) -> None:
    assert 0.0 <= stack_path_match(text, FRAMES) <= 1.0
    assert 0.0 <= unknown_dim_share(text, [MATMUL]) <= 1.0
    assert isinstance(format_ok(text, text)[0], bool)
    assert all(isinstance(location, str) for location in code_locations(text))
