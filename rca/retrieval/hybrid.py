"""Hybrid retrieval: which runbooks (and accepted past fixes) explain an incident.

Per query: BM25 over the chunks of the in-memory :class:`~rca.retrieval.index.CorpusIndex`,
cosine over the stored chunk embeddings (pgvector's HNSW for the candidates, then exact
cosine for every candidate runbook's chunks on the vectors the index holds), the runbooks'
front-matter signal regexes and :mod:`~rca.retrieval.agreement` as priors, fused per runbook.
Feedback shapes later rankings: runbooks rejected for the same issue or a near-identical incident
are demoted, and incidents whose suggestion was accepted come back through
:func:`similar_accepted`. Feedback is a project's own: both take a required ``project_id`` and
never look at another project's decisions (runbooks themselves are shared by every project).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rca.retrieval import fusion
from rca.retrieval.index import CorpusIndex, current_index
from rca.retrieval.signals import Signals
from rca.retrieval.weights import DEFAULT_WEIGHTS, FusionWeights

if TYPE_CHECKING:
    pass


__all__ = [
    "DEFAULT_STRATEGY",
    "Evidence",
    "Mode",
    "Retrieved",
    "gather",
    "rank",
    "search",
    "unit_vector",
]

Mode = Literal["hybrid", "bm25", "dense"]
#: Chosen by ``rca eval --cv`` (docs/MEASUREMENTS.md "Retrieval"); the weights of every strategy
#: are in :mod:`rca.retrieval.weights`.
DEFAULT_STRATEGY: fusion.Strategy = "calibrated"
DENSE_CANDIDATES = 40  # chunks taken from the HNSW index per query
EF_SEARCH = 100  # >= DENSE_CANDIDATES, or HNSW returns fewer rows than asked
BM25_CANDIDATES = 20
#: A runbook rejected for this incident drops this many places: ranks lower, still retrievable.
#: In places, not score, so it means the same under every fusion strategy (halving a calibrated
#: score, whose cosine term is a large common offset, pushed it out of the top ten).
DEMOTE_PLACES = 3


@dataclass(frozen=True)
class Retrieved:
    """One ranked item with every score, so the UI can show why it ranked there.

    ``kind="runbook"``: ``text`` is the runbook's best chunk. ``kind="past_fix"``: an
    accepted suggestion of a similar incident; ``slug`` is the runbook it cited and
    ``action``/``reason`` what was accepted. ``joined``: what brought in a runbook that
    retrieval did not rank (a release-notes row, :func:`rca.suggestion.evidence.joined_items`);
    it then has no chunk and no scores, and ``text`` is its steps.
    """

    slug: str
    title: str
    failure_class: str
    section: str
    chunk_id: int | None
    text: str
    bm25: float
    cosine: float
    signal: float
    fused: float
    kind: Literal["runbook", "past_fix"] = "runbook"
    action: str = ""
    reason: str = ""
    incident_id: int | None = None
    issue_id: int | None = None
    joined: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for ``Analysis.retrieved``."""
        return asdict(self)


def unit_vector(vector: Sequence[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


def _nearest_runbook_ids(query: np.ndarray) -> list[int]:
    """Runbook ids of the HNSW index's :data:`DENSE_CANDIDATES` nearest chunks.

    One round trip: ``SET LOCAL`` and the search go as one simple-protocol query (its own
    implicit transaction, or the caller's), the vector inlined (floats formatted here),
    instead of BEGIN / SET / SELECT / COMMIT — each a wake-up of the server process, which
    on a loaded machine is where a query's milliseconds go.
    """
    from django.db import connection

    from rca.models import RunbookChunk

    table = connection.ops.quote_name(RunbookChunk._meta.db_table)
    vector = "[" + ",".join(map(str, query.tolist())) + "]"
    sql = (
        f"SET LOCAL hnsw.ef_search = {int(EF_SEARCH)}; SELECT runbook_id FROM {table}"  # noqa: S608
        f" ORDER BY embedding <=> '{vector}'::vector LIMIT {int(DENSE_CANDIDATES)}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql)
        cursor.nextset()  # past the SET's empty result
        return [row[0] for row in cursor.fetchall()]


def _db_chunk_cosines(index: CorpusIndex, query: np.ndarray, extra: set[int]) -> np.ndarray:
    """Cosine of the chunks of the vector search's top runbooks and of ``extra`` runbooks
    (NaN elsewhere): HNSW finds candidates, then exact cosine over their chunks, so every
    candidate is scored on all its chunks and approximate recall cannot drop one.

    The exact part uses the vectors the index holds (:mod:`rca.retrieval.vectors`): at
    100k chunks a query can have ~1,000 candidate runbooks (every signal-matched one is
    scored), and reading their ~4,000 rows from the table took 30-130 ms.
    """
    candidates = np.zeros(len(index), dtype=bool)
    candidates[list(extra)] = True
    for runbook_id in _nearest_runbook_ids(query):
        position = index.runbook_position.get(runbook_id)
        if position is not None:
            candidates[position] = True
    chunks = np.flatnonzero(candidates[index.chunk_runbook])
    cosines = np.full(len(index.chunk_ids), np.nan)
    cosines[chunks] = index.held_vectors().cosines(chunks, query, index.chunk_position)
    return cosines


def _chunk_cosines(index: CorpusIndex, query: np.ndarray, extra: set[int]) -> np.ndarray:
    if index.embeddings is not None:
        cosines: np.ndarray = index.embeddings @ query  # unit rows: dot product is cosine
        return cosines
    return _db_chunk_cosines(index, query, extra)


def _per_runbook_max(index: CorpusIndex, chunk_values: np.ndarray) -> np.ndarray:
    result = np.full(len(index), -np.inf)
    np.fmax.at(result, index.chunk_runbook, chunk_values)
    result[np.isneginf(result)] = np.nan
    return result


def _best_chunk(
    index: CorpusIndex, position: int, bm25: np.ndarray, cos: np.ndarray, w: FusionWeights
) -> int:
    """The runbook's chunk to show: scored as the default fusion scores runbooks."""
    chunks = np.flatnonzero(index.chunk_runbook == position)
    if not chunks.size:
        return -1
    top = float(bm25.max()) or 1.0
    score = bm25[chunks] / top + w.cosine_scale * np.nan_to_num(cos[chunks])
    return int(chunks[int(np.argmax(score))])


def _top(fused: np.ndarray, present: np.ndarray, k: int) -> list[int]:
    """Positions of the ``k`` best present runbooks: the order of a stable sort of all of
    them (ties by position), but sorting only the present ones that reach the k-th score —
    a Python walk over a full argsort took ~5 ms at 25k runbooks."""
    candidates = np.flatnonzero(present)
    if candidates.size > k > 0:
        values = -fused[candidates]
        kth = np.partition(values, k - 1)[k - 1]
        if not np.isnan(kth):  # NaN sorts last: fewer than k scores, keep them all
            candidates = candidates[values <= kth]
    order = candidates[np.argsort(-fused[candidates], kind="stable")]
    return [int(p) for p in order[:k]]


@dataclass(frozen=True)
class Evidence:
    """Per-runbook and per-chunk evidence of one query, before fusion (``rca eval`` ranks it
    under many strategies and weights); the agreement arrays are None when not gathered."""

    bm25: np.ndarray  # per runbook: its best BM25 document
    chunk_bm25: np.ndarray
    cosine: np.ndarray  # per runbook: its best chunk's cosine, NaN when not scored
    chunk_cos: np.ndarray
    signal: np.ndarray  # per runbook: 1.0 when a front-matter regex matched
    framework: np.ndarray | None = None  # per runbook: 1.0 if it shares a framework
    exception: np.ndarray | None = None  # per runbook: the exception class's rarity if quoted
    #: per runbook: 1.0 when its signal can only come from its quotes (no ``signals``)
    quoted: np.ndarray | None = None


def gather(
    signals: Signals,
    query_embedding: Sequence[float] | None,
    index: CorpusIndex,
    mode: Mode = "hybrid",
) -> Evidence:
    """BM25, signal prior and (unless ``mode="bm25"`` or no embedding) cosine evidence."""
    bm25, chunk_bm25 = index.bm25_scores(signals.bm25_query())
    matches = index.signal_matches(signals.signal_text(), lambda: signals.setting_terms)
    signal = (matches > 0).astype(np.float64)
    if query_embedding is not None and mode != "bm25":
        extra = {*np.argsort(-bm25)[:BM25_CANDIDATES].tolist(), *np.flatnonzero(signal).tolist()}
        chunk_cos = _chunk_cosines(index, unit_vector(query_embedding), extra)
    else:
        chunk_cos = np.full(len(index.chunk_ids), np.nan)
    cosine = _per_runbook_max(index, chunk_cos)
    framework, exception = index.agreement(signals.frameworks, signals.error_type_short)
    return Evidence(
        bm25, chunk_bm25, cosine, chunk_cos, signal, framework, exception, index.quoted_only
    )


def rank(
    evidence: Evidence,
    *,
    mode: Mode = "hybrid",
    strategy: str = DEFAULT_STRATEGY,
    weights: FusionWeights = DEFAULT_WEIGHTS,
    demoted: Iterable[int] = (),
    k: int = 5,
) -> tuple[list[int], np.ndarray]:
    """(positions of the ``k`` best runbooks, fused score of every runbook)."""
    bm25, cosine, signal = evidence.bm25, evidence.cosine, evidence.signal
    if mode == "bm25":
        fused, present = bm25.copy(), bm25 > 0
    elif mode == "dense":
        fused, present = np.nan_to_num(cosine, nan=-2.0), ~np.isnan(cosine)
    else:
        priors = {
            "framework": evidence.framework,
            "exception": evidence.exception,
            "quoted": evidence.quoted,
        }
        fused = fusion.fuse(strategy, bm25, cosine, signal, weights, **priors)
        present = (bm25 > 0) | ~np.isnan(cosine) | (signal > 0)
    lowered = set(demoted)
    if lowered:
        # Each demoted runbook takes the score of the one DEMOTE_PLACES below it (a hair
        # less), so the shown fused score says it was demoted and the order agrees.
        order = _top(fused, present, k + (DEMOTE_PLACES + 1) * len(lowered))
        for position in sorted(lowered & set(order), key=order.index, reverse=True):
            at = order.index(position)
            below = order[min(at + DEMOTE_PLACES, len(order) - 1)]
            fused[position] = fused[below] - 1e-6 * max(1.0, abs(float(fused[below])))
    return _top(fused, present, k), fused


def search(
    signals: Signals,
    query_embedding: Sequence[float] | None,
    k: int = 5,
    demote: Iterable[str] = (),
    *,
    strategy: str = DEFAULT_STRATEGY,
    mode: Mode = "hybrid",
    index: CorpusIndex | None = None,
    weights: FusionWeights = DEFAULT_WEIGHTS,
) -> list[Retrieved]:
    """The ``k`` best runbooks for an incident's signals, best first, one item per runbook.

    ``query_embedding`` is ``embed_queries([signals.embedding_text()])[0]``; without it only BM25
    and the signal prior rank. ``demote``: slugs rejected for this incident (see
    :func:`rejected_slugs`), kept but ranked lower. ``index`` defaults to the stored corpus.
    Never empty while the corpus has an embedded chunk and an embedding is given: the
    vector search ranks every runbook, whatever BM25 finds.
    """
    index = index if index is not None else current_index()
    if not len(index):
        return []
    ev = gather(signals, query_embedding, index, mode)
    demoted = {index.position_of[s] for s in demote if s in index.position_of}
    order, fused = rank(ev, mode=mode, strategy=strategy, weights=weights, demoted=demoted, k=k)
    results = []
    for position in order:
        chunk = _best_chunk(index, position, ev.chunk_bm25, ev.chunk_cos, weights)
        results.append(
            Retrieved(
                slug=index.slugs[position],
                title=index.titles[position],
                failure_class=index.classes[position],
                section=index.chunk_sections[chunk] if chunk >= 0 else "",
                chunk_id=index.chunk_ids[chunk] if chunk >= 0 else None,
                text=index.chunk_texts[chunk] if chunk >= 0 else "",
                bm25=round(float(ev.bm25[position]), 4),
                cosine=round(float(np.nan_to_num(ev.cosine[position])), 4),
                signal=float(ev.signal[position]),
                fused=round(float(fused[position]), 6),
            )
        )
    return results
