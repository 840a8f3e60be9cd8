"""K-fold cross-validation of the default fusion's weights (pure, over prepared evidence).

The cases are split into ``k`` folds by id (sorted, dealt round-robin, so the classes of a
sorted case file spread over the folds). For each fold, every setting of
:data:`rca.retrieval.weights.TUNING_GRID` is scored on the *other* folds — over every
corpus of the run at once, since one setting must serve them all — and the best one ranks
the held-out fold. The pooled held-out rankings give figures that no tuning has seen;
the settings each fold chose say how stable the choice is.

Only settings that pass the noise guard (:mod:`rca.evaluation.noise_guard`) compete: with
the dense ranker replaced by seeded noise, fusion must rank a plain-Markdown corpus at least
as well as its lexical part. The guard uses no dev case, so it is the same for every fold;
a setting it excludes (the report lists them) cannot be chosen however well it scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

from rca.evaluation.metrics import CaseResult, Metrics, summarise
from rca.evaluation.noise_guard import admissible
from rca.evaluation.run import DEFAULT_RUN, Prepared, results
from rca.retrieval.weights import TUNING_GRID, FusionWeights, grid

__all__ = ["CrossValidation", "cross_validate", "fold_of", "guarded_grid"]


@dataclass
class CrossValidation:
    folds: int
    run: str
    metrics: dict[str, Metrics]  # per corpus, pooled over the held-out folds
    chosen: list[dict[str, float]]  # per fold, the tuned fields' values
    excluded: list[dict[str, float]] = field(default_factory=list)  # by the noise guard

    def as_dict(self) -> dict[str, object]:
        return {
            "folds": self.folds,
            "run": self.run,
            "corpora": {name: m.as_dict() for name, m in self.metrics.items()},
            "chosen": self.chosen,
            "excluded_by_noise_guard": self.excluded,
        }


def fold_of(case_ids: list[str], folds: int) -> dict[str, int]:
    """Fold of every case id: sorted ids dealt round-robin."""
    return {case_id: i % folds for i, case_id in enumerate(sorted(set(case_ids)))}


def _objective(rs: list[list[CaseResult]]) -> tuple[float, float]:
    """Mean hit@1, then mean MRR@5, over corpora."""
    scored = [summarise(r) for r in rs if r]
    if not scored:
        return 0.0, 0.0
    return (
        sum(m.hit1 for m in scored) / len(scored),
        sum(m.mrr for m in scored) / len(scored),
    )


def _tuned(weights: FusionWeights) -> dict[str, float]:
    return {f.name: getattr(weights, f.name) for f in fields(weights) if f.name in TUNING_GRID}


def guarded_grid() -> tuple[list[FusionWeights], list[FusionWeights]]:
    """(admissible, excluded) settings of :func:`rca.retrieval.weights.grid`, grid order."""
    settings = grid()
    passing = [admissible(w) for w in settings]  # each setting asked once: 10 seeds x 60 ranks
    return (
        [w for w, ok in zip(settings, passing, strict=True) if ok],
        [w for w, ok in zip(settings, passing, strict=True) if not ok],
    )


def cross_validate(
    prepared: Mapping[str, Prepared],
    folds: int = 5,
    run: str = DEFAULT_RUN,
    k: int = 5,
    settings: Sequence[FusionWeights] | None = None,
) -> CrossValidation:
    """Held-out figures of ``run`` per corpus, its weights tuned on the other folds among
    ``settings`` (default: the grid's settings the noise guard admits)."""
    if folds < 2:
        raise ValueError("cross-validation needs at least 2 folds")
    ids = [str(c.get("id", "")) for p in prepared.values() for c in p.cases]
    assignment = fold_of(ids, folds)
    excluded: list[FusionWeights] = []
    if settings is None:
        settings, excluded = guarded_grid()
    if not settings:
        raise ValueError("no setting of the tuning grid passes the noise guard")
    held_out: dict[str, list[CaseResult]] = {name: [] for name in prepared}
    chosen = []
    for fold in range(folds):
        train = {
            name: [i for i, c in enumerate(p.cases) if assignment[str(c.get("id", ""))] != fold]
            for name, p in prepared.items()
        }
        test = {
            name: [i for i, c in enumerate(p.cases) if assignment[str(c.get("id", ""))] == fold]
            for name, p in prepared.items()
        }
        best = max(
            settings,
            key=lambda w: _objective(
                [results(p, run, w, train[name], k) for name, p in prepared.items()]
            ),
        )  # max keeps the first of equals: the default wins ties (when admissible)
        chosen.append(_tuned(best))
        for name, p in prepared.items():
            held_out[name].extend(results(p, run, best, test[name], k))
    return CrossValidation(
        folds=folds,
        run=run,
        metrics={name: summarise(r) for name, r in held_out.items()},
        chosen=chosen,
        excluded=[_tuned(w) for w in excluded],
    )
