"""A measurement an answer quotes as its reason is not a value it sets (issue 16, review
finding 6).

vLLM says "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your
Tesla T4 GPU has compute capability 7.5." GPT-style answers quote that back: "Pass `--dtype
float16` since the T4 has compute capability 7.5". The limit reader must not read the
quoted 7.5 as the action setting the capability; an answer that still loads bfloat16, or
moves a limited setting in its own words, fails as before.
"""

from __future__ import annotations

import pytest

from rca.suggestion.reported_clauses import without_reports
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

BF16 = (
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0."
    " Your Tesla T4 GPU has compute capability 7.5."
)
IR = (
    "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Load"
    " model from model.onnx failed:Unsupported model IR version: 10, max supported IR version: 9"
)
CASES = {"bf16": (BF16, "serving-bf16-checkpoint-old-gpu"), "ir": (IR, "onnx-model-load-invalid")}


def _premises_ok(case: str, action: str) -> bool:
    message, slug = CASES[case]
    ctx = message_context(message, (slug, 0.9))
    return validate(draft(action, slug, "The message names the limit."), ctx).premises_ok


@pytest.mark.parametrize(
    ("case", "action"),
    [
        ("bf16", "Pass `--dtype float16` since the T4 has compute capability 7.5."),
        (
            "bf16",
            "Use `--dtype half` because your GPU has compute capability 7.5, below the 8.0"
            " bfloat16 needs.",
        ),
        ("bf16", "Set `dtype=torch.float16` (the Tesla T4 is compute capability 7.5)."),
        ("bf16", "Load the model in float16; the T4 (compute capability 7.5) lacks bfloat16."),
        ("bf16", "Load the model in float16 as the T4 only has compute capability 7.5."),
        ("ir", "Upgrade `onnxruntime` to 1.17 since the model has IR version 10."),
    ],
)
def test_a_measurement_quoted_as_the_reason_is_not_set(case: str, action: str) -> None:
    assert _premises_ok(case, action)


@pytest.mark.parametrize(
    ("case", "action"),
    [
        ("bf16", "Pass `--dtype bfloat16` since the T4 has compute capability 7.5."),
        (
            "bf16",
            "Use `--dtype float16` since the T4 has compute capability 7.5, and load it in"
            " bfloat16.",
        ),
        ("ir", "Re-export the model with IR version 11 because the runtime reads IR version 9."),
        ("ir", "Set `model.ir_version = 11` since the runtime is old."),
    ],
)
def test_a_move_the_action_makes_itself_still_fails(case: str, action: str) -> None:
    assert not _premises_ok(case, action)


def test_reports_are_blanked_in_place_and_in_linear_time() -> None:
    action = "Use `--dtype half` since the GPU has 7.5; set `x=1`."
    blanked = without_reports(action)
    assert len(blanked) == len(action) and "7.5" not in blanked and "`x=1`" in blanked
    assert_linear(lambda n: without_reports("since the a (" * n + "; the" * n))
    assert_linear(lambda n: without_reports("since it, set ; the x = 1 should" * n))


@pytest.mark.parametrize(
    "action",
    [
        "Downgrade the opset: the model should use IR version 11.",
        "Re-save the model: the fix is `model.ir_version = 11`.",
        "Re-export the model; the model must have IR version 11.",
        "Re-export the model (the right value is IR version 11).",
        "Since the runtime is old, set `model.ir_version = 11`.",
        "Because the runtime reads IR version 9, re-export with IR version 11.",
    ],
)
def test_a_statement_that_prescribes_a_value_is_no_report(action: str) -> None:
    """Re-review finding 3: a modal, "the fix is" or an assignment after ':' is an instruction,
    and a reason clause ends at a comma an imperative follows."""
    assert not _premises_ok("ir", action)


@pytest.mark.parametrize(
    "action",
    [
        "Upgrade `onnxruntime` to 1.17: the model has IR version 10.",
        "Upgrade `onnxruntime` to 1.17 (the runtime supports IR version 9, the model is 10).",
        "Since the model has IR version 10, upgrade `onnxruntime` to 1.17.",
    ],
)
def test_a_statement_of_what_is_stays_a_report(action: str) -> None:
    assert _premises_ok("ir", action)


def test_a_negated_use_in_a_statement_still_reports() -> None:
    assert _premises_ok("bf16", "Load the model in float16; the T4 cannot use bfloat16.")
