"""Calibrated confidence and abstention (issue 16 item 4): the fit, the reliability table,
the threshold rule, and the offline provider saying "no confident suggestion"."""

from __future__ import annotations

import json
import random

import pytest

from rca.suggestion.calibration import choose_threshold, fit_logistic, reliability
from rca.suggestion.confidence import (
    PARAMS_PATH,
    Calibration,
    Strength,
    load_calibration,
    strength,
    wanted_evidence,
)
from rca.suggestion.context import AnalysisContext
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.validation import validate
from tests.support.evidence import evidence

NEVER = Calibration(0.0, {}, {}, {}, 0.0)
ALWAYS = Calibration(0.0, {}, {}, {}, 1.0)  # p = 0.5 < 1: every answer abstains


def _synthetic(n: int, seed: int = 7) -> tuple[list[Strength], list[bool]]:
    """Cases whose label follows a known logistic law in ``retrieval``."""
    rng = random.Random(seed)
    rows, labels = [], []
    for _ in range(n):
        x = rng.uniform(1.0, 5.0)
        p = 1 / (1 + pow(2.718281828, -(2.0 * (x - 3.0))))
        rows.append(Strength(retrieval=x, margin=rng.random(), step=0.0, steps=1))
        labels.append(rng.random() < p)
    return rows, labels


def test_fit_recovers_a_known_logistic_law_and_is_calibrated_on_it() -> None:
    rows, labels = _synthetic(4000)
    fit = fit_logistic(rows, labels, ["retrieval", "margin"], l2=0.01)
    # retrieval's coefficient, back on the raw scale, is ~2; margin carries nothing.
    assert fit.coef["retrieval"] / fit.scale["retrieval"] == pytest.approx(2.0, rel=0.15)
    assert abs(fit.coef["margin"]) < 0.15
    predicted = [fit.probability(row) for row in rows]
    table = reliability(predicted, labels, bins=5)
    assert table.cases == 4000 and sum(b.cases for b in table.bins) == 4000
    assert table.ece < 0.03
    for b in table.bins:
        if b.cases > 100:
            assert abs(b.predicted - b.observed) < 0.06


def test_reliability_of_a_perfectly_wrong_model_is_maximal() -> None:
    table = reliability([0.95, 0.95, 0.05, 0.05], [False, False, True, True], bins=5)
    assert table.ece == pytest.approx(0.95)
    assert table.brier == pytest.approx(0.9025)


def test_threshold_keeps_answers_that_are_more_often_right() -> None:
    predicted = [0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9]
    observed = [False, False, True, True, True, False, True]
    # Answering from 0.25 up gives 4 right, 1 wrong (gain 3); from 0.45 up 3 right, 1 wrong
    # (gain 2); from 0 up 4 right and 3 wrong.
    assert choose_threshold(predicted, observed, min_answered=0.3) == pytest.approx(0.25)
    # Never abstain when every answer is right.
    assert choose_threshold([0.2, 0.5, 0.9], [True, True, True]) == 0.0


def test_the_shipped_parameters_are_one_documented_fit() -> None:
    data = json.loads(PARAMS_PATH.read_text(encoding="utf-8"))
    calibration = load_calibration()
    assert 0.0 < calibration.threshold < 1.0
    assert set(calibration.coef) == set(calibration.mean) == set(calibration.scale)
    assert set(calibration.coef) <= {"retrieval", "margin", "step", "steps"}
    assert "dev" in data["meta"]["fitted_on"] and data["meta"]["refit"]
    # Stronger evidence never lowers the confidence (every fitted coefficient is >= 0).
    # Retrieval figures are shares of the fusion's ceiling (rca.retrieval.fusion.ceiling).
    weak = Strength(retrieval=0.2, margin=0.0, step=-2.0, steps=0)
    strong = Strength(retrieval=1.0, margin=0.5, step=5.0, steps=3)
    assert calibration.probability(weak) < calibration.threshold < calibration.probability(strong)


def _bare_warning() -> AnalysisContext:
    """A captured warning with no traceback, logs or versions; retrieval found only loosely
    related runbooks, with low scores and no clear winner."""
    return AnalysisContext(
        error_type="UserWarning",
        message="Token indices sequence length is longer than the specified maximum",
        evidence=evidence(
            ("nccl-timeout-watchdog", 0.45),
            ("cuda-oom-training", 0.44),
            ("nan-loss-numerical-ops", 0.43),
        ),
    )


def test_weak_evidence_abstains_with_closest_runbooks_and_wanted_evidence() -> None:
    ctx = _bare_warning()
    draft = OfflineProvider().suggest(ctx)
    assert draft.abstained
    assert draft.confidence < load_calibration().threshold
    closest = draft.abstention["closest"]
    assert [c["slug"] for c in closest] == [item.slug for item in ctx.evidence]
    assert all(c["title"] for c in closest)
    wanted = " ".join(draft.abstention["wanted"])
    assert "traceback" in wanted and "log lines" in wanted and "versions" in wanted
    # The best guess is still a validated answer, kept for the record.
    assert draft.action and validate(draft, ctx).ok
    assert json.loads(draft.raw)["abstained"] is True


def test_abstention_follows_the_threshold_not_the_wording() -> None:
    ctx = _bare_warning()
    answered = OfflineProvider(NEVER).suggest(ctx)
    abstained = OfflineProvider(ALWAYS).suggest(ctx)
    assert not answered.abstained and answered.abstention == {}
    assert abstained.abstained and abstained.confidence == answered.confidence == 0.5
    assert (abstained.action, abstained.runbook) == (answered.action, answered.runbook)


def test_strength_reads_the_margin_and_the_chosen_step() -> None:
    ctx = _bare_warning()
    figures = strength(ctx, rank_steps(ctx))
    assert figures.retrieval == 0.45
    assert figures.margin == pytest.approx(0.45 - 0.44, abs=1e-9)
    assert figures.steps >= 1 and figures.step > -2.0
    assert strength(AnalysisContext("E", "m"), []).step == -2.0


def test_wanted_evidence_names_only_what_the_incident_lacks() -> None:
    full = AnalysisContext(
        error_type="RuntimeError",
        message="torch 2.3.1: shape mismatch",
        logs=[
            {
                "ts": None,
                "level": None,
                "message": "x",
                "trace_id": None,
                "error_code": None,
                "extra": {},
            }
        ],
        inference_context={"framework": "pytorch"},
    )
    wanted = wanted_evidence(full)
    assert not any("log lines" in w or "versions" in w or "how it runs" in w for w in wanted)
    assert any("traceback" in w for w in wanted)
    assert any("tensor shapes" in w for w in wanted)
