"""Fusing per-runbook evidence (BM25, cosine, signal prior) into one ranking (pure).

Two strategies, both kept so ``rca eval`` can compare them on any corpus:

- ``weighted``: scores normalised per query (BM25 / its max, cosine min-max), mixed
  0.4 / 0.6, plus the front-matter signal prior;
- ``rrf``: reciprocal rank fusion, ``sum w / (60 + rank)`` over the BM25, cosine and
  signal rankings — scale-free, so it needs no normalisation.

Arrays are indexed by runbook; a cosine of NaN means "not scored" (outside the vector
search's top chunks) and counts as the worst.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = [
    "STRATEGIES",
    "Strategy",
    "fuse",
    "normalise_bm25",
    "normalise_cosine",
    "rrf",
    "weighted",
]

Strategy = Literal["weighted", "rrf"]
STRATEGIES: tuple[Strategy, ...] = ("weighted", "rrf")

W_BM25 = 0.4
W_COSINE = 0.6
#: The signal prior: a front-matter regex of the runbook matched the error text. Regexes are
#: written for exactly this purpose, so a match outweighs a middling lexical/semantic score
#: but not a clearly better one (a regex shared by several runbooks must not decide alone).
W_SIGNAL = 0.5
RRF_K = 60
W_BM25_RRF = 1.0
W_COSINE_RRF = 1.0
W_SIGNAL_RRF = 1.5


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


def weighted(bm25: np.ndarray, cosine: np.ndarray, signal: np.ndarray) -> np.ndarray:
    return W_BM25 * normalise_bm25(bm25) + W_COSINE * normalise_cosine(cosine) + W_SIGNAL * signal


def _reciprocal_ranks(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    result = np.zeros(values.shape, dtype=np.float64)
    order = [i for i in np.argsort(-values, kind="stable") if present[i]]
    for rank, index in enumerate(order, start=1):
        result[index] = 1.0 / (RRF_K + rank)
    return result


def rrf(bm25: np.ndarray, cosine: np.ndarray, signal: np.ndarray) -> np.ndarray:
    known = ~np.isnan(cosine)
    return (
        W_BM25_RRF * _reciprocal_ranks(bm25, bm25 > 0)
        + W_COSINE_RRF * _reciprocal_ranks(np.nan_to_num(cosine, nan=-2.0), known)
        + W_SIGNAL_RRF * _reciprocal_ranks(signal, signal > 0)
    )


def fuse(strategy: str, bm25: np.ndarray, cosine: np.ndarray, signal: np.ndarray) -> np.ndarray:
    if strategy == "weighted":
        return weighted(bm25, cosine, signal)
    if strategy == "rrf":
        return rrf(bm25, cosine, signal)
    raise ValueError(f"unknown fusion strategy {strategy!r}; choose one of {STRATEGIES}")
