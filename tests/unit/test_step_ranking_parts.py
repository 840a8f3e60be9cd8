"""The step ranking says why a step won: its score is the sum of named parts, one per
mechanism (what ``bench/step_choice.py`` re-weighs to try a new one, out of fold)."""

from __future__ import annotations

import math

from ingest.parsing.shapes import ShapeDiff
from rca.suggestion.context import AnalysisContext
from rca.suggestion.providers.offline_weights import WEIGHTS
from rca.suggestion.providers.step_ranking import rank_steps
from tests.support.evidence import evidence


def _ctx() -> AnalysisContext:
    return AnalysisContext(
        error_type="RuntimeError",
        message="mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        shape_diff=[ShapeDiff(tensor=None, op="matmul", expected=[None, 512], actual=[4, 256])],
        evidence=evidence(("matmul-shape-mismatch-linear", 0.8)),
    )


def test_each_ranked_step_score_is_the_sum_of_its_named_parts() -> None:
    ranked = rank_steps(_ctx())
    assert len(ranked) > 1
    for candidate in ranked:
        assert set(candidate.parts) == {"runbook", "position", "overlap", "setting", "fact"}
        assert math.isclose(sum(candidate.parts.values()), candidate.score)
    scores = [c.score for c in ranked]
    assert scores == sorted(scores, reverse=True)


def test_a_step_further_down_its_runbook_carries_the_position_part() -> None:
    for candidate in rank_steps(_ctx()):
        assert math.isclose(
            candidate.parts["position"], -WEIGHTS.position_penalty * candidate.position
        )
        assert candidate.parts["runbook"] == WEIGHTS.runbook  # the only runbook: its own top
