"""The offline provider on real dev cases: a draft that validates, cites the runbook and
names what the incident shows (dimensions, frame, dtypes, a runner-up fix)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ingest.parsing.logs import parse_logs
from ingest.parsing.shapes import ShapeDiff, extract_shape_diff
from ingest.parsing.stacktrace import parse_stacktrace
from rca.corpus.files import bundled_runbook_dir, load_directory
from rca.suggestion.confidence import Strength, load_calibration
from rca.suggestion.context import AnalysisContext, evidence_from_runbook
from rca.suggestion.providers import (
    OfflineProvider,
    ProviderError,
)
from rca.suggestion.validation import validate
from tests.support.evidence import bundled_runbooks as _runbooks
from tests.support.evidence import evidence as _evidence
from tests.support.frames import USER_FORWARD

CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


def _case(case_id: str) -> dict[str, Any]:
    for line in CASES.read_text(encoding="utf-8").splitlines():
        case: dict[str, Any] = json.loads(line)
        if case["id"] == case_id:
            return case
    raise LookupError(case_id)


def _context(case: dict[str, Any], slug: str, score: float = 0.72) -> AnalysisContext:
    """Build the context the pipeline would: parsed frames, logs and shapes, one runbook."""
    runbooks = {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}
    chain = parse_stacktrace(case["traceback"]) if case["traceback"] else []
    return AnalysisContext(
        error_type=case["exception_type"],
        message=case["message"],
        frames=chain[-1]["frames"] if chain else [],
        logs=parse_logs(case["logs"]),
        shape_diff=extract_shape_diff(case["message"]),
        inference_context={"framework": case["framework"]},
        evidence=[evidence_from_runbook(runbooks[slug], score)],
    )


@pytest.mark.parametrize(
    ("case_id", "slug"),
    [
        ("c001", "cuda-oom-inference"),
        ("c014", "matmul-shape-mismatch-incompatible-components"),
        ("c020", "conv-channel-mismatch-grayscale-rgba"),
        ("c023", "checkpoint-size-mismatch-vocab"),
        ("c029", "checkpoint-keys-module-prefix"),
        ("c045", "nan-loss-numerical-ops"),
        ("c047", "seq-too-long-tokenizer-truncation"),
        ("c106", "version-transformers-import-error"),
    ],
)
def test_offline_draft_on_real_case_validates_and_cites_the_runbook(
    case_id: str, slug: str
) -> None:
    ctx = _context(_case(case_id), slug)
    draft = OfflineProvider().suggest(ctx)
    result = validate(draft, ctx)
    assert result.ok, (draft, result.complaints)
    assert draft.runbook == slug
    assert (draft.provider, draft.model) == ("offline", OfflineProvider.model)
    # The confidence is the calibrated probability of the draft's evidence figures.
    assert draft.confidence == load_calibration().probability(Strength(**draft.strength))


def test_offline_reason_names_the_mismatched_dimensions() -> None:
    ctx = _context(_case("c014"), "matmul-shape-mismatch-incompatible-components")
    assert "4096 instead of 768" in OfflineProvider().suggest(ctx).reason


def test_offline_reason_names_the_failing_frame_exactly_as_in_the_frames() -> None:
    ctx = _context(_case("c045"), "nan-loss-numerical-ops")
    reason = OfflineProvider().suggest(ctx).reason
    assert "/home/rfnet_project/rfnet-master/utils/math_utils.py:distance_matrix_vector" in reason


def test_offline_draft_for_a_hand_built_matmul_mismatch_mentions_both_widths() -> None:
    runbook = {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}[
        "matmul-shape-mismatch-linear"
    ]
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message="mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        shape_diff=[ShapeDiff(tensor=None, op="matmul", expected=[None, 512], actual=[4, 256])],
        frames=USER_FORWARD,  # the user's own layer: resizing it is theirs to do
        evidence=[evidence_from_runbook(runbook, 14.2)],  # an unbounded (BM25-like) score
    )
    draft = OfflineProvider().suggest(ctx)
    assert "256 instead of 512" in draft.reason
    assert draft.action.startswith("Set the layer's `in_features`")
    assert 0 < draft.confidence < 1
    assert validate(draft, ctx).ok


def test_offline_provider_is_deterministic() -> None:
    ctx = _context(_case("c020"), "conv-channel-mismatch-grayscale-rgba")
    first, second = OfflineProvider().suggest(ctx), OfflineProvider().suggest(ctx)
    assert (first.action, first.reason, first.raw) == (second.action, second.reason, second.raw)


def test_offline_provider_without_evidence_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="no runbook"):
        OfflineProvider().suggest(AnalysisContext(error_type="E", message="m"))


def test_offline_shortens_an_over_long_step_by_dropping_its_example() -> None:
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message="[TRT] [E] 1: Serialization assertion magicTagRead == kMAGIC_TAG failed",
        evidence=_evidence(("version-tensorrt-engine-mismatch", 1.0)),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.action.startswith("Rebuild the engine")
    assert "trtexec" not in draft.action and validate(draft, ctx).ok


def test_offline_reason_names_the_dtypes_of_a_type_mismatch() -> None:
    ctx = _context(_case("c037"), "dtype-mismatch-input-weight-type")
    reason = OfflineProvider().suggest(ctx).reason
    assert "CUDAFloatTensor and CUDAHalfTensor" in reason


@pytest.mark.parametrize(
    "case_id", [json.loads(line)["id"] for line in CASES.read_text().splitlines()]
)
def test_offline_draft_validates_for_every_dev_case_with_its_category_runbooks(
    case_id: str,
) -> None:
    """Whatever step fits, the draft cites a given runbook and passes validation."""
    case = _case(case_id)
    same_class = [rb for rb in _runbooks().values() if rb.failure_class == case["category"]]
    ctx = _context(case, same_class[0].slug)
    ctx.evidence = [
        evidence_from_runbook(rb, 1.0 - 0.05 * i) for i, rb in enumerate(same_class[:3])
    ]
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook in ctx.allowed_slugs
    assert validate(draft, ctx).ok, (draft.action, validate(draft, ctx).complaints)


def _runner_up_ctx() -> AnalysisContext:
    """An inference OOM (c007): its runbook's first fix and a different second one both fit."""
    return _context(_case("c007"), "cuda-oom-inference")


def test_offline_reason_offers_the_runner_up_fix_when_it_is_a_different_one() -> None:
    ctx = _runner_up_ctx()
    draft = OfflineProvider().suggest(ctx)
    first, _, alternative = draft.reason.partition(" If that does not apply: ")
    assert alternative and first, draft.reason
    # Another step of the cited runbook, not the chosen one reworded.
    openings = [step.strip("*").split()[:2] for step in ctx.evidence[0].remediation]
    assert alternative.split()[:2] in openings
    assert alternative.split()[:2] != draft.action.split()[:2]
    assert validate(draft, ctx).ok


def test_offline_leaves_the_alternative_out_when_the_reason_would_grow_too_long(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import rca.suggestion.providers.offline as offline

    full = OfflineProvider().suggest(_runner_up_ctx()).reason
    first = full.partition(" If that does not apply: ")[0]
    monkeypatch.setattr(offline, "MAX_REASON_CHARS", len(full) - 1)
    assert OfflineProvider().suggest(_runner_up_ctx()).reason == first


def test_dropping_asides_keeps_the_parentheses_of_code() -> None:
    from rca.suggestion.providers.wording import drop_asides, shorten

    action = "Call `scaler.unscale_()` and read `x.size(0)` before clipping (see the AMP notes)"
    assert drop_asides(action) == "Call `scaler.unscale_()` and read `x.size(0)` before clipping"
    nested = "Permute HWC to CHW (`x.permute(0, 3, 1, 2)` for batches) or use `ToTensor()`."
    assert drop_asides(nested) == "Permute HWC to CHW or use `ToTensor()`."
    long_action = action + " and then `model.eval()` " + "x" * 200 + " (an example)"
    shortened = shorten(long_action)
    assert "`x.size(0)`" in shortened and "`model.eval()`" in shortened
    assert "(an example)" not in shortened and "(see the AMP notes)" not in shortened
