"""Re-ranking the fused top-k with evidence beyond the BM25 and cosine scores (pure).

Why: on 190 dev cases BM25 or the dense ranker alone is right at rank 1 for only 162 / 148 /
147 / 163 (the four suite corpora), so no fusion of those two scores can reach issue 15's
targets; new evidence has to come from comparing the incident with each candidate runbook
directly. Each feature is computed the same way for every incident and runbook (no word
list of cases): whether the incident's exception type is named by the runbook, whether the
libraries of its traceback are, how much of the runbook's title and quoted error lines the
incident's error text, chained exceptions and log lines hold, how the two rankers place the
runbook and whether they agree, and how many other candidates share its failure class.

A linear score over standardised features re-orders the ``k`` best fused runbooks only; the
coefficients are fitted on training folds by ``rca eval --cv K --rerank``
(:mod:`rca.evaluation.rerank_fit`). Measurement only: out of fold it did not beat the default
fusion (docs/MEASUREMENTS.md "Retrieval", 2026-12-05), so the serving path does not call it. On the
dev misses the right runbook scores *below* the wrong winner on nearly every one of these
features too (title and quote coverage in ~70% of them): the text evidence itself points at
the wrong page. Were a fit ever to land, its coefficients would go in one JSON next to
:mod:`rca.retrieval.weights` and this module into ``rca/retrieval``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rca.retrieval.quoted import quoted_phrases
from rca.retrieval.signals import Signals
from rca.retrieval.tokens import tokenize

if TYPE_CHECKING:
    from rca.retrieval.index import CorpusIndex

__all__ = ["FEATURES", "RERANK_DEPTH", "RerankModel", "features", "profile_of", "rerank"]

#: How many fused candidates the re-ranker re-orders.
RERANK_DEPTH = 10
#: Quoted lines of at least this many distinct tokens count for the coverage features (the
#: matching signal needs 4 and all of them; coverage is partial, so short quotes are kept).
_MIN_QUOTE = 3

FEATURES: tuple[str, ...] = (
    "fused_gap",  # fused score minus the best candidate's
    "bm25_share",  # BM25 / the query's best BM25
    "cosine_gap",  # cosine minus the best candidate's cosine
    "signal",  # a signal regex or quoted line matched the error text
    "bm25_rank",  # 1 / (1 + rank among all runbooks by BM25)
    "dense_rank",  # 1 / (1 + rank by cosine)
    "rank_agreement",  # 1 / (1 + |BM25 rank - dense rank|)
    "type_in_fields",  # the exception type (idf-weighted) in title, tags or signal words
    "type_in_body",  # ... anywhere in the runbook
    "libraries_named",  # share of the traceback's libraries the title/tags/signals name
    "title_coverage",  # idf-weighted share of title tokens in the incident's text
    "quote_error",  # best share of a quoted line's tokens in the error text
    "quote_chained",  # ... in the chained exceptions
    "quote_logs",  # ... in the warning-and-above log lines
    "class_support",  # share of the other candidates of the same failure class
)


@dataclass(frozen=True)
class Profile:
    """What the features read of a corpus, per runbook position, built once per index."""

    tokens: list[frozenset[str]]  # every token of the runbook's chunks and fields
    field_tokens: list[frozenset[str]]  # title, tags, signal words
    title_tokens: list[frozenset[str]]
    quotes: list[list[frozenset[str]]]
    idf: dict[str, float]  # log(N / df) / log(N), over runbooks

    def weight(self, token: str) -> float:
        return self.idf.get(token, 1.0)


def profile_of(index: CorpusIndex) -> Profile:
    """The :class:`Profile` of a :class:`~rca.retrieval.index.CorpusIndex`, cached on it."""
    cached = index.__dict__.get("_rerank_profile")
    if isinstance(cached, Profile):
        return cached
    size = len(index.slugs)
    texts: list[list[str]] = [[] for _ in range(size)]
    for position, text in zip(
        index.chunk_runbook.tolist(),
        index.chunk_texts,
        strict=True,
    ):
        texts[position].append(text)
    fields = [frozenset(tokenize(t)) for t in index.field_texts]
    tokens = [frozenset(tokenize("\n".join(own))) | f for own, f in zip(texts, fields, strict=True)]
    df: dict[str, int] = {}
    for own in tokens:
        for token in own:
            df[token] = df.get(token, 0) + 1
    scale = math.log(max(size, 2))
    profile = Profile(
        tokens=tokens,
        field_tokens=fields,
        title_tokens=[frozenset(tokenize(t)) for t in index.titles],
        quotes=[quoted_phrases("\n".join(own), _MIN_QUOTE) for own in texts],
        idf={t: math.log(size / n) / scale for t, n in df.items()},
    )
    index.__dict__["_rerank_profile"] = profile
    return profile


def _coverage(quotes: list[frozenset[str]], tokens: frozenset[str]) -> float:
    if not quotes or not tokens:
        return 0.0
    return max(len(q & tokens) / len(q) for q in quotes)


def _libraries(signals: Signals) -> set[str]:
    """Libraries the incident names: traceback packages, a qualified type's package, the
    inference context's framework."""
    names = {lib.lower() for lib in signals.libraries}
    if "." in signals.error_type:
        names.add(signals.error_type.split(".", 1)[0].lower())
    framework = signals.context.get("framework", "")
    if framework:
        names.add(str(framework).lower())
    return {n for n in names if n and n not in ("builtins", "python")}


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(len(values))
    return ranks


def features(
    signals: Signals,
    index: CorpusIndex,
    bm25: np.ndarray,
    cosine: np.ndarray,
    signal: np.ndarray,
    fused: np.ndarray,
    candidates: list[int],
) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate runbook position, in ``candidates`` order."""
    profile = profile_of(index)
    classes: list[str] = index.classes
    rows = np.zeros((len(candidates), len(FEATURES)), dtype=np.float64)
    if not candidates:
        return rows
    known = ~np.isnan(cosine)
    cos = np.where(known, cosine, float(cosine[known].min()) if known.any() else 0.0)
    bm25_rank, dense_rank = _ranks(bm25), _ranks(np.where(known, cosine, -2.0))
    top_bm25 = float(bm25.max()) or 1.0
    chosen = np.array(candidates)
    best_fused, best_cos = float(fused[chosen].max()), float(cos[chosen].max())
    error = frozenset(tokenize(f"{signals.error_type}: {signals.message}"))
    chained = frozenset(tokenize("\n".join(signals.chained)))
    logs = frozenset(tokenize("\n".join(signals.log_messages)))
    text = error | chained | logs | frozenset(tokenize("\n".join(signals.library_frames)))
    kind = [t for t in tokenize(signals.error_type_short or signals.error_type)[:1]]
    libraries = _libraries(signals)
    counts: dict[str, int] = {}
    for p in candidates:
        counts[classes[p]] = counts.get(classes[p], 0) + 1
    for row, p in enumerate(candidates):
        title = profile.title_tokens[p]
        title_weight = sum(profile.weight(t) for t in title)
        rows[row] = (
            float(fused[p]) - best_fused,
            float(bm25[p]) / top_bm25,
            float(cos[p]) - best_cos,
            float(signal[p] > 0),
            1.0 / (1.0 + bm25_rank[p]),
            1.0 / (1.0 + dense_rank[p]),
            1.0 / (1.0 + abs(bm25_rank[p] - dense_rank[p])),
            sum(profile.weight(t) for t in kind if t in profile.field_tokens[p]),
            sum(profile.weight(t) for t in kind if t in profile.tokens[p]),
            (
                sum(1 for lib in libraries if lib in profile.field_tokens[p]) / len(libraries)
                if libraries
                else 0.0
            ),
            (
                sum(profile.weight(t) for t in title if t in text) / title_weight
                if title_weight
                else 0.0
            ),
            _coverage(profile.quotes[p], error),
            _coverage(profile.quotes[p], chained),
            _coverage(profile.quotes[p], logs),
            (counts[classes[p]] - 1) / max(len(candidates) - 1, 1),
        )
    return rows


@dataclass(frozen=True)
class RerankModel:
    """A linear score over standardised :data:`FEATURES` (``(x - mean) / scale . coef``)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]

    def score(self, rows: np.ndarray) -> np.ndarray:
        mean, scale = np.asarray(self.mean), np.asarray(self.scale)
        scores: np.ndarray = ((rows - mean) / scale) @ np.asarray(self.coef)
        return scores


def rerank(
    order: list[int],
    model: RerankModel,
    signals: Signals,
    index: CorpusIndex,
    bm25: np.ndarray,
    cosine: np.ndarray,
    signal: np.ndarray,
    fused: np.ndarray,
    depth: int = RERANK_DEPTH,
) -> list[int]:
    """``order`` with its first ``depth`` positions re-ordered by ``model`` (stable)."""
    head, tail = order[:depth], order[depth:]
    if len(head) < 2:
        return order
    scores = model.score(features(signals, index, bm25, cosine, signal, fused, head))
    ranked = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [head[i] for i in ranked] + tail
