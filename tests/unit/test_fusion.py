"""Calibrated fusion, cross-validation and the evidence ablation, on small hand-made
evidence (pure: no database, no model)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np

from rca.evaluation.ablation import PARTS, _without
from rca.evaluation.crossval import cross_validate, fold_of
from rca.evaluation.run import Prepared
from rca.retrieval import fusion
from rca.retrieval.hybrid import Evidence, rank
from rca.retrieval.signals import Signals
from rca.retrieval.weights import DEFAULT_WEIGHTS, TUNING_GRID, grid


def _evidence(
    bm25: list[float], cosine: list[float], signal: list[float] | None = None
) -> Evidence:
    b, c = np.array(bm25), np.array(cosine)
    s = np.array(signal) if signal is not None else np.zeros_like(b)
    return Evidence(bm25=b, chunk_bm25=b, cosine=c, chunk_cos=c, signal=s)


def test_an_unsure_dense_ranker_does_not_overturn_a_clear_lexical_winner() -> None:
    # Cosines within 0.02 of each other: min-max stretches them to 0..1 and the weighted
    # mix follows dense; calibrated fusion keeps BM25's clear winner.
    bm25 = np.array([10.0, 4.0, 1.0])
    flat = np.array([0.41, 0.43, 0.42])
    assert int(np.argmax(fusion.weighted(bm25, flat, np.zeros(3)))) == 1
    assert int(np.argmax(fusion.calibrated(bm25, flat, np.zeros(3)))) == 0


def test_a_sure_dense_ranker_overturns_a_narrow_lexical_winner() -> None:
    bm25 = np.array([10.0, 9.0, 1.0])
    sure = np.array([0.20, 0.70, 0.10])
    assert int(np.argmax(fusion.calibrated(bm25, sure, np.zeros(3)))) == 1


def test_unscored_cosine_never_helps_a_runbook() -> None:
    bm25 = np.array([5.0, 5.0])
    cosine = np.array([np.nan, -0.2])  # negative but scored beats unscored? never better
    fused = fusion.calibrated(bm25, cosine, np.zeros(2))
    assert fused[0] <= fused[1]


def test_demoting_a_runbook_ranks_it_lower_whatever_the_score_sign() -> None:
    ev = _evidence([0.0, 0.0], [-0.1, -0.12])  # raw cosines below zero: fused < 0
    order, _ = rank(ev)
    assert order[0] == 0
    order, _ = rank(ev, demoted={0})
    assert order[0] == 1


def test_the_tuning_grid_starts_with_the_defaults_and_covers_every_value() -> None:
    settings = grid()
    assert settings[0] == DEFAULT_WEIGHTS
    assert len(settings) == len(set(settings))
    for name, values in TUNING_GRID.items():
        assert {getattr(s, name) for s in settings} == set(values)


def test_folds_deal_sorted_ids_round_robin() -> None:
    folds = fold_of([f"c{i}" for i in range(10)], 5)
    assert [folds[f"c{i}"] for i in range(10)] == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]


def _prepared(cases: list[tuple[str, str, Evidence]]) -> Prepared:
    index: Any = SimpleNamespace(classes=["a", "b"], slugs=["rb-a", "rb-b"])
    return Prepared(
        index=index,
        cases=[{"id": i, "category": category} for i, category, _ in cases],
        evidence=[ev for _, _, ev in cases],
    )


def test_cross_validation_scores_each_fold_with_weights_tuned_on_the_others() -> None:
    # Eight cases need a strong dense weight (cosine_scale > 2.5); the two of fold 4 need a
    # weak one (< 1.67). Tuned on its own cases fold 4 would reach 2/2; tuned on the other
    # folds, as cross-validation must, it gets the strong weight and misses both.
    dense_right = _evidence([2.0, 1.0], [0.30, 0.50])  # truth b
    lexical_right = _evidence([2.0, 1.0], [0.30, 0.60])  # truth a
    cases = [
        (f"c{i}", "a" if i in (4, 9) else "b", lexical_right if i in (4, 9) else dense_right)
        for i in range(10)
    ]
    # The whole grid: the noise guard (tested in test_noise_guard.py) admits no scale > 2.5.
    cv = cross_validate({"toy": _prepared(cases)}, folds=5, settings=grid())
    assert cv.chosen[4]["cosine_scale"] > 2.5
    assert cv.metrics["toy"].hit1 == 0.8
    assert sorted(cv.metrics["toy"].misses) == ["c4", "c9"]


def test_ablation_empties_exactly_the_named_parts() -> None:
    signals = Signals(
        error_type="RuntimeError",
        error_type_short="RuntimeError",
        message="CUDA error",
        frames=["train.py:step"],
        log_messages=["NCCL WARN timeout"],
        error_codes=["E1"],
        context={"device": "cuda"},
    )
    without_logs = _without(signals, PARTS["log lines"])
    assert without_logs.log_messages == [] and without_logs.error_codes == []
    assert replace(without_logs, log_messages=signals.log_messages, error_codes=["E1"]) == signals
    assert _without(signals, PARTS["own-code frames"]).frames == []
    assert _without(signals, PARTS["inference context"]).context == {}


def test_the_suite_scores_the_bundled_and_independent_corpora_with_and_without_signals() -> None:
    from rca.evaluation.suite import INDEPENDENT, corpus_specs

    specs = corpus_specs(None, ignore_signals=False, suite=True)
    assert [(label, ignore) for label, _, ignore in specs] == [
        ("bundled", False),
        ("independent", False),
        ("independent (no signals)", True),
        ("bundled (no signals)", True),
    ]
    assert specs[1][1] == INDEPENDENT
