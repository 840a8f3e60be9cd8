"""The noise guard of the fusion weights' cross-validation (pure: no database, no model)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np

from rca.evaluation.crossval import cross_validate, guarded_grid
from rca.evaluation.noise_guard import SEEDS, admissible, noise_trial
from rca.evaluation.run import Prepared
from rca.retrieval.hybrid import Evidence
from rca.retrieval.weights import DEFAULT_WEIGHTS, TUNING_GRID, grid


def test_a_small_signal_weight_lets_noise_overturn_quoted_error_matches() -> None:
    # The setting landed and reverted on 2026-12-05: the test's seed gave 56 against 60. Since
    # the symptom quotes of the other two pages join their fields (2026-12-06) it gives 59;
    # seed 0 gives 56. The setting as it was: without the disagreement shrink (2026-12-07).
    reverted = replace(DEFAULT_WEIGHTS, cosine_scale=1.0, signal=0.3, cosine_disagree=1.0)
    assert noise_trial(reverted, 7) == (59, 60)
    assert noise_trial(reverted, 0) == (56, 60)
    assert not admissible(reverted)


def test_the_guard_asks_every_seed_not_only_a_lucky_one() -> None:
    old_default = replace(DEFAULT_WEIGHTS, cosine_scale=3.0, signal=0.5)
    assert noise_trial(old_default, 7) == (60, 60)
    assert not admissible(old_default)  # seed 0: 56 of 60
    assert admissible(old_default, seeds=[7])
    assert len(SEEDS) >= 10


def _toy() -> Prepared:
    index: Any = SimpleNamespace(classes=["a", "b"], slugs=["rb-a", "rb-b"])
    evidence = Evidence(
        bm25=np.array([2.0, 1.0]),
        chunk_bm25=np.array([2.0, 1.0]),
        cosine=np.array([0.30, 0.50]),
        chunk_cos=np.array([0.30, 0.50]),
        signal=np.zeros(2),
    )
    cases = [{"id": f"c{i}", "category": "b"} for i in range(10)]
    return Prepared(index=index, cases=cases, evidence=[evidence] * 10)


def test_cross_validation_chooses_only_among_settings_the_guard_admits() -> None:
    # Every case wants the strongest dense weight; the guard leaves the folds only weaker ones.
    admitted, excluded = guarded_grid()
    assert admitted and excluded and len(admitted) + len(excluded) == len(grid())
    cv = cross_validate({"toy": _toy()}, folds=5)
    allowed = [{name: getattr(w, name) for name in TUNING_GRID} for w in admitted]
    assert all(choice in allowed for choice in cv.chosen)
    assert cv.excluded and all(choice not in cv.excluded for choice in cv.chosen)
    unguarded = cross_validate({"toy": _toy()}, folds=5, settings=grid())
    assert unguarded.metrics["toy"].hit1 >= cv.metrics["toy"].hit1
