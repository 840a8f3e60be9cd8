"""Fusing per-runbook evidence (BM25, cosine, signal prior) into one ranking (pure).

Three strategies, all kept so ``rca eval`` can compare them on any corpus; every weight is
in :class:`rca.retrieval.weights.FusionWeights`:

- ``calibrated`` (the default): BM25 / its max, plus a fixed multiple of the raw cosine
  (its spread shrunk when dense's best is not BM25's: :func:`dense_term`),
  plus the signal prior and agreement on framework and exception class
  (:mod:`rca.retrieval.agreement`). Raw cosine keeps its absolute scale, so an unsure dense model
  (flat cosines) cannot overturn a clear lexical winner — fusion copes with rankers of
  very different quality instead of trusting both alike. The sum is divided by its
  :func:`ceiling`, so the score is a share of the best evidence fusion can give (BM25's
  winner, cosine 1, a matched signal): the suggestion side reads scores and gaps in these
  units, which a re-weighting does not rescale (the order is the same either way);
- ``weighted``: BM25 / its max and min-max cosine mixed 0.4 / 0.6, plus the signal prior;
- ``rrf``: reciprocal rank fusion, ``sum w / (k + rank)`` over the BM25, cosine and
  signal rankings — scale-free, so it needs no normalisation.

Arrays are indexed by runbook; a cosine of NaN means "not scored" (outside the vector
search's candidates) and counts as the worst.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from rca.retrieval.weights import DEFAULT_WEIGHTS, FusionWeights

__all__ = [
    "STRATEGIES",
    "Strategy",
    "calibrated",
    "ceiling",
    "dense_term",
    "quoted_signal",
    "fuse",
    "normalise_bm25",
    "normalise_cosine",
    "rrf",
    "weighted",
]

Strategy = Literal["calibrated", "weighted", "rrf"]
STRATEGIES: tuple[Strategy, ...] = ("calibrated", "weighted", "rrf")


def normalise_bm25(bm25: np.ndarray) -> np.ndarray:
    top = float(bm25.max()) if bm25.size else 0.0
    return bm25 / top if top > 0 else np.zeros_like(bm25)


def normalise_cosine(cosine: np.ndarray) -> np.ndarray:
    known = ~np.isnan(cosine)
    result = np.zeros_like(cosine)
    if not known.any():
        return result
    low, high = float(cosine[known].min()), float(cosine[known].max())
    if high - low < 1e-9:
        result[known] = 1.0
    else:
        result[known] = (cosine[known] - low) / (high - low)
    return result


def _raw_cosine(cosine: np.ndarray) -> np.ndarray:
    """Cosine as it is, unscored runbooks at the lowest scored value (never a bonus)."""
    known = ~np.isnan(cosine)
    floor = float(cosine[known].min()) if known.any() else 0.0
    return np.where(known, cosine, floor)


def dense_term(
    bm25: np.ndarray, cosine: np.ndarray, w: FusionWeights = DEFAULT_WEIGHTS
) -> np.ndarray:
    """The cosine as calibrated fusion adds it (times ``cosine_scale``): the raw cosine when
    dense's best runbook is one of BM25's best (the rankers agree on the winner, so dense
    counts in full, also against a signal), or when BM25 found nothing; otherwise every
    cosine is pulled toward the cosine of BM25's best, keeping ``cosine_disagree`` of its
    distance from it. Dense still re-orders, but needs that much more margin to overturn
    the lexical winner (:attr:`~rca.retrieval.weights.FusionWeights.cosine_disagree` says
    why). BM25's winner keeps its fused score (the suggestion side reads scores and gaps);
    a runbook whose cosine trails that winner's gains part of the gap, and no cosine rises
    above dense's best, so the score stays a share of :func:`ceiling`."""
    cos = _raw_cosine(cosine)
    if w.cosine_disagree == 1.0 or cos.size < 2 or not (bm25 > 0).any():
        return cos
    lexical = int(np.argmax(bm25))
    if bm25[int(np.argmax(cos))] >= bm25[lexical]:
        return cos
    anchor = float(cos[lexical])
    return anchor + w.cosine_disagree * (cos - anchor)


def quoted_signal(
    bm25: np.ndarray,
    cosine: np.ndarray,
    signal: np.ndarray,
    quoted: np.ndarray,
    w: FusionWeights = DEFAULT_WEIGHTS,
) -> np.ndarray:
    """``signal`` as fusion counts it: in full, except a signal that only a page's quoted error
    lines gave (``quoted``: a page without ``signals``, :mod:`rca.retrieval.quoted`) on a page
    other than the one BM25 and dense both rank first, which counts
    :attr:`~rca.retrieval.weights.FusionWeights.quoted_against_consensus` of it. Dense agrees
    only when no page has a higher cosine than BM25's winner and that cosine reaches
    :attr:`~rca.retrieval.weights.FusionWeights.consensus_cosine`, far above what a ranker of
    noise reaches, so a dense model that knows nothing never takes a quote's weight away (the
    noise guard, :mod:`rca.evaluation.noise_guard`). Without cosines every signal counts.
    Work in the matched signals only (a few per query), not a pass over every runbook."""
    if w.quoted_against_consensus == 1.0 or not bm25.size:
        return signal
    lexical = int(np.argmax(bm25))
    anchor = float(cosine[lexical])
    if bm25[lexical] <= 0 or not anchor >= w.consensus_cosine:  # NaN: not scored
        return signal
    matched = np.flatnonzero(signal)
    weaker = matched[(quoted[matched] > 0) & (matched != lexical)]
    if not weaker.size or float(np.nanmax(cosine)) > anchor:
        return signal
    counted = signal.astype(np.float64, copy=True)
    counted[weaker] *= w.quoted_against_consensus
    return counted


def ceiling(w: FusionWeights = DEFAULT_WEIGHTS) -> float:
    """The largest unnormalised calibrated score: BM25's winner, cosine 1, a matched signal."""
    return 1.0 + w.cosine_scale + w.signal


def calibrated(
    bm25: np.ndarray,
    cosine: np.ndarray,
    signal: np.ndarray,
    w: FusionWeights = DEFAULT_WEIGHTS,
    framework: np.ndarray | None = None,
    exception: np.ndarray | None = None,
    quoted: np.ndarray | None = None,
) -> np.ndarray:
    """Share of :func:`ceiling`: at most 1 without agreement, below 0 only for negative
    cosines. Agreement on framework and exception class (:mod:`rca.retrieval.agreement`) is
    added on top, outside the ceiling: it re-orders runbooks of similar evidence and leaves
    the score of a runbook without it where it was, so the readers of the score (step
    ranking, confidence) keep their units. A quoted signal against both rankers' winner counts
    less (:func:`quoted_signal`)."""
    if quoted is not None and quoted.size:
        signal = quoted_signal(bm25, cosine, signal, quoted, w)
    total = normalise_bm25(bm25) + w.cosine_scale * dense_term(bm25, cosine, w) + w.signal * signal
    if framework is not None and framework.size:
        total = total + w.framework * framework
    if exception is not None and exception.size:
        total = total + w.exception_type * exception
    return total / ceiling(w)


def weighted(
    bm25: np.ndarray, cosine: np.ndarray, signal: np.ndarray, w: FusionWeights = DEFAULT_WEIGHTS
) -> np.ndarray:
    return (
        w.weighted_bm25 * normalise_bm25(bm25)
        + w.weighted_cosine * normalise_cosine(cosine)
        + w.signal * signal
    )


def _reciprocal_ranks(values: np.ndarray, present: np.ndarray, k: float) -> np.ndarray:
    result = np.zeros(values.shape, dtype=np.float64)
    order = [i for i in np.argsort(-values, kind="stable") if present[i]]
    for rank, index in enumerate(order, start=1):
        result[index] = 1.0 / (k + rank)
    return result


def rrf(
    bm25: np.ndarray, cosine: np.ndarray, signal: np.ndarray, w: FusionWeights = DEFAULT_WEIGHTS
) -> np.ndarray:
    known = ~np.isnan(cosine)
    return (
        w.rrf_bm25 * _reciprocal_ranks(bm25, bm25 > 0, w.rrf_k)
        + w.rrf_cosine * _reciprocal_ranks(np.nan_to_num(cosine, nan=-2.0), known, w.rrf_k)
        + w.rrf_signal * _reciprocal_ranks(signal, signal > 0, w.rrf_k)
    )


def fuse(
    strategy: str,
    bm25: np.ndarray,
    cosine: np.ndarray,
    signal: np.ndarray,
    weights: FusionWeights = DEFAULT_WEIGHTS,
    framework: np.ndarray | None = None,
    exception: np.ndarray | None = None,
    quoted: np.ndarray | None = None,
) -> np.ndarray:
    """The fused score of every runbook; agreement counts in ``calibrated`` only (the other
    strategies are kept as they were measured, for comparison)."""
    if strategy == "calibrated":
        return calibrated(bm25, cosine, signal, weights, framework, exception, quoted)
    if strategy == "weighted":
        return weighted(bm25, cosine, signal, weights)
    if strategy == "rrf":
        return rrf(bm25, cosine, signal, weights)
    raise ValueError(f"unknown fusion strategy {strategy!r}; choose one of {STRATEGIES}")
