"""Fitting and cross-validating the re-ranker of :mod:`rca.evaluation.rerank_features`
(``rca eval --cv K --rerank``).

For each case the default fusion's :data:`~rca.evaluation.rerank_features.RERANK_DEPTH` best
runbooks are the candidates; a candidate is right when its failure class is the case's. The
model is a listwise (softmax) logistic regression: it maximises the probability that the top
candidate is of the right class, the quantity hit@1 counts. Tried first, a pairwise
regression over every right-minus-wrong pair was led by the pair counts: a case with three
right candidates and seven wrong gives 21 pairs that all favour the class seen most often,
and out of fold it lost 3-5 cases per corpus. Fitted on the training folds of every corpus
at once (one model must serve them all), scored on the held-out fold, with the same fold
assignment as :func:`rca.evaluation.crossval.fold_of`.

The noise guard (:mod:`rca.evaluation.noise_guard`) stays a constraint: a fold's model is used
only if, with seeded noise for the dense ranker, re-ranked fusion ranks the guard's
plain-Markdown pages right at least as often as the lexical ranking, for every seed;
otherwise that fold falls back to the default order (the report counts such folds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rca.evaluation.crossval import fold_of
from rca.evaluation.metrics import CaseResult, Metrics, summarise
from rca.evaluation.rerank_features import FEATURES, RERANK_DEPTH, RerankModel, features, rerank
from rca.evaluation.run import DEFAULT_RUN, RUNS, Prepared, case_incident, case_result
from rca.retrieval.signals import Signals, build_signals
from rca.retrieval.weights import DEFAULT_WEIGHTS

__all__ = [
    "STRENGTH",
    "Candidates",
    "RerankCV",
    "candidates",
    "cross_validate_rerank",
    "fit",
    "guard_passes",
]


@dataclass
class Candidates:
    """One case's fused candidates on one corpus: positions, feature rows, right or not."""

    order: list[int]  # the default run's full top-k order (k = RERANK_DEPTH)
    rows: np.ndarray
    right: np.ndarray  # bool per candidate


def _signals(prepared: Prepared) -> list[Signals]:
    return [build_signals(case_incident(case)) for case in prepared.cases]


def candidates(
    prepared: Prepared, signals: Sequence[Signals] | None = None, depth: int = RERANK_DEPTH
) -> list[Candidates]:
    """The default run's candidates of every case, with their features."""
    from rca.retrieval.hybrid import rank

    mode, strategy = RUNS[DEFAULT_RUN]
    signals = _signals(prepared) if signals is None else signals
    out = []
    for case, sig, ev in zip(prepared.cases, signals, prepared.evidence, strict=True):
        order, fused = rank(ev, mode=mode, strategy=strategy, weights=DEFAULT_WEIGHTS, k=depth)
        rows = features(sig, prepared.index, ev.bm25, ev.cosine, ev.signal, fused, order)
        category = str(case.get("category", ""))
        right = np.array([prepared.index.classes[p] == category for p in order], dtype=bool)
        out.append(Candidates(order, rows, right))
    return out


def _loss(
    beta: np.ndarray, groups: Sequence[tuple[np.ndarray, np.ndarray]], penalty: np.ndarray
) -> tuple[float, np.ndarray]:
    """Listwise loss, -log P(the top candidate is of the right class), and its gradient."""
    loss = 0.5 * float(penalty @ (beta * beta))
    grad = penalty * beta
    for x, right in groups:
        s = x @ beta
        s = s - s.max()
        p = np.exp(s)
        p /= p.sum()
        mass = float(p[right].sum())
        loss -= float(np.log(max(mass, 1e-300)))
        q = np.where(right, p, 0.0) / max(mass, 1e-300)
        grad = grad + x.T @ (p - q)
    return loss, grad


#: L2 strength on the standardised coefficients (the fused score's is free). Not tuned: out of
#: fold on 190 dev cases 1, 10 and 100 gave -3 to +1 against the default per corpus (README).
STRENGTH = 10.0


def fit(groups: Sequence[Candidates], strength: float = STRENGTH) -> RerankModel:
    """Listwise logistic (softmax) fit over ``groups``: the probability that the re-ranked
    top candidate is of the case's class, maximised with an L2 penalty ``strength`` on every
    coefficient but the fused score's, so with no evidence the fit keeps the default order.
    Cases whose candidates are all right or all wrong carry no information and are skipped."""
    from scipy.optimize import minimize

    rows = np.concatenate([g.rows for g in groups if len(g.rows)])
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale < 1e-9] = 1.0
    usable = [
        ((g.rows - mean) / scale, g.right) for g in groups if g.right.any() and not g.right.all()
    ]
    penalty = np.full(len(FEATURES), strength)
    penalty[FEATURES.index("fused_gap")] = 0.0
    start = np.zeros(len(FEATURES))
    start[FEATURES.index("fused_gap")] = 1.0
    if not usable:
        return RerankModel(tuple(mean), tuple(scale), tuple(start))
    found = minimize(_loss, start, args=(usable, penalty), jac=True, method="L-BFGS-B")
    return RerankModel(tuple(mean), tuple(scale), tuple(float(v) for v in found.x))


def _reordered(g: Candidates, model: RerankModel) -> list[int]:
    scores = model.score(g.rows)
    ranked = sorted(range(len(g.order)), key=lambda i: (-scores[i], i))
    return [g.order[i] for i in ranked]


def guard_passes(model: RerankModel, seeds: Sequence[int] | None = None) -> bool:
    """The noise guard's procedure with re-ranking after fusion: per seed, at least as many
    of its 60 incidents right as the lexical ranking (BM25 and signals, not re-ranked)."""
    from rca.evaluation.noise_guard import DIMENSIONS, SEEDS, noise_incidents, noise_index
    from rca.retrieval.hybrid import gather, rank

    for seed in SEEDS if seeds is None else seeds:
        index, rng = noise_index(seed)
        lexical = fused_right = 0
        for slug, error_type, message in noise_incidents():
            sig = build_signals({"error_type": error_type, "message": message})
            noise = rng.normal(size=DIMENSIONS).tolist()
            plain, _ = rank(gather(sig, None, index), k=RERANK_DEPTH)
            lexical += index.slugs[plain[0]] == slug
            ev = gather(sig, noise, index)
            order, fused = rank(ev, k=RERANK_DEPTH)
            order = rerank(order, model, sig, index, ev.bm25, ev.cosine, ev.signal, fused)
            fused_right += index.slugs[order[0]] == slug
        if fused_right < lexical:
            return False
    return True


@dataclass
class RerankCV:
    folds: int
    reranked: dict[str, Metrics]
    default: dict[str, Metrics]
    coefficients: list[dict[str, float]]  # per fold, on standardised features
    guard: list[bool]  # per fold: the fitted model passed the noise guard
    per_case: dict[str, list[tuple[str, bool, bool]]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "folds": self.folds,
            "depth": RERANK_DEPTH,
            "features": list(FEATURES),
            "corpora": {
                name: {"reranked": m.as_dict(), "default": self.default[name].as_dict()}
                for name, m in self.reranked.items()
            },
            "coefficients": self.coefficients,
            "noise_guard_passed": self.guard,
        }


def cross_validate_rerank(
    prepared: Mapping[str, Prepared], folds: int = 5, k: int = 5, strength: float = STRENGTH
) -> RerankCV:
    """Out-of-fold figures of the default run re-ranked by a model fitted on the other folds."""
    groups = {name: candidates(p) for name, p in prepared.items()}
    ids = [str(case.get("id", "")) for p in prepared.values() for case in p.cases]
    assignment = fold_of(ids, folds)
    held: dict[str, list[CaseResult]] = {name: [] for name in prepared}
    base: dict[str, list[CaseResult]] = {name: [] for name in prepared}
    coefficients, guard = [], []
    for fold in range(folds):
        train = [
            g
            for name, p in prepared.items()
            for case, g in zip(p.cases, groups[name], strict=True)
            if assignment[str(case.get("id", ""))] != fold
        ]
        model = fit(train, strength)
        passed = guard_passes(model)
        coefficients.append(dict(zip(FEATURES, (round(v, 4) for v in model.coef), strict=True)))
        guard.append(passed)
        for name, p in prepared.items():
            for i, case in enumerate(p.cases):
                if assignment[str(case.get("id", ""))] != fold:
                    continue
                g = groups[name][i]
                order = _reordered(g, model) if passed else g.order
                held[name].append(case_result(p, i, order[:k]))
                base[name].append(case_result(p, i, g.order[:k]))
    return RerankCV(
        folds=folds,
        reranked={name: summarise(r) for name, r in held.items()},
        default={name: summarise(r) for name, r in base.items()},
        coefficients=coefficients,
        guard=guard,
    )
