"""Retrieval latency: incident -> ranked runbooks in a warm process, bundled and synthetic corpora.

    .venv/bin/python bench/retrieval.py [--repeat 5] [--sizes 10000,100000] [--keep]

For the bundled corpus (the bench database) and for synthetic corpora of each ``--sizes``
chunk count (each in a database of its own, see ``synthetic_corpus.py``; dropped afterwards
unless ``--keep``, which also reuses a kept one): setup time (generate, COPY, HNSW build at
``maintenance_work_mem = 1GB``), the worker's in-memory index build (time and RSS growth,
the held chunk vectors included: 1.5 kB a chunk),
then per dev-set incident (signals + one real query embedding each) p50/p95 of

- ``bm25``: the BM25 part alone (``CorpusIndex.bm25_scores``);
- ``signal``: the front-matter regex prior (``CorpusIndex.signal_matches``);
- ``vector``: the vector part (pgvector HNSW top candidates, one round trip, then exact
  cosine over their chunks on the vectors the index holds, ``rca.retrieval.vectors``);
- ``search``: ``retrieval.search`` end to end, hybrid (includes the corpus-version check);
- ``bm25 mode``: ``retrieval.search(mode="bm25")``: everything but the vector search.

``cand.`` is the mean number of runbooks the vector part scores exactly (HNSW's top plus
BM25's top 20 plus every signal-matched runbook); ``--signal-share`` sets how many synthetic
runbooks carry regexes (default all: the pessimistic case for that number).

rank-bm25 itself is timed on the same documents up to ``--rank-bm25-max`` chunks (it walks
every document per query token: ~0.6 s per query at 100k). Goal: search p95 <= 50 ms at 100k.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import os
import statistics
import time
from dataclasses import dataclass, field

import psutil
from _env import REPO, setup_django

GOAL_MS = 50.0
PARTS = ("bm25", "signal", "vector", "search", "bm25 mode")


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


def _timed(fn, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def _rss_mib() -> float:
    """Process RSS after returning freed heap to the OS (glibc keeps it otherwise, so the
    growth would include the transient rows of the index build's DB read)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return psutil.Process().memory_info().rss / 2**20


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass
class Row:
    name: str
    runbooks: int = 0
    chunks: int = 0
    setup: str = "-"
    build_s: float = 0.0
    rss_mib: float = 0.0
    rss_total_mib: float = 0.0
    load: str = ""
    hnsw_plan: str = "-"
    candidates: float = 0.0  # runbooks scored exactly by the vector part, mean
    rank_bm25: str = "-"
    times: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in PARTS})


def _measure(row: Row, signals, vectors, repeat: int) -> None:
    import numpy as np

    from rca.retrieval import hybrid as retrieval
    from rca.retrieval import index as corpus_index

    index = corpus_index.current_index()
    retrieval.search(signals[0], vectors[0])  # warm the connection and caches
    candidates = []
    for _ in range(repeat):
        for sig, vector in zip(signals, vectors, strict=True):
            seconds, (bm25, _) = _timed(index.bm25_scores, sig.bm25_tokens())
            row.times["bm25"].append(seconds)
            seconds, matches = _timed(
                index.signal_matches, sig.signal_text(), lambda s=sig: s.setting_terms
            )
            row.times["signal"].append(seconds)
            extra = set(np.argsort(-bm25)[: retrieval.BM25_CANDIDATES].tolist()) | set(
                np.flatnonzero(matches).tolist()
            )
            query = retrieval.unit_vector(vector)
            seconds, cosines = _timed(retrieval._db_chunk_cosines, index, query, extra)
            row.times["vector"].append(seconds)
            scored = np.unique(index.chunk_runbook[~np.isnan(cosines)])
            candidates.append(len(scored))
            row.times["search"].append(_timed(retrieval.search, sig, vector)[0])
            row.times["bm25 mode"].append(_timed(retrieval.search, sig, None, mode="bm25")[0])
    row.candidates = statistics.mean(candidates)
    row.load = _load()


def _hnsw_plan(vector) -> str:
    """Whether the vector part's nearest-chunk query uses the HNSW index."""
    from pgvector.django import CosineDistance

    from rca.models import RunbookChunk

    plan = (
        RunbookChunk.objects.annotate(distance=CosineDistance("embedding", list(vector)))
        .order_by("distance")
        .values_list("runbook_id", flat=True)[:40]
        .explain()
    )
    return "HNSW" if "chunk_embedding_hnsw" in plan else "seq scan"


def _build_index(row: Row) -> None:
    from rca.retrieval import index as corpus_index

    corpus_index._current = None
    before = _rss_mib()
    row.build_s, index = _timed(corpus_index.current_index)
    row.rss_total_mib = _rss_mib()
    row.rss_mib = row.rss_total_mib - before
    row.runbooks, row.chunks = len(index), len(index.chunk_texts)


def _rank_bm25(row: Row, signals, queries: int = 10) -> None:
    """rank-bm25 on the index's own documents: build time and query p50, and a check that
    the inverted index scores the same."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    from rca.retrieval import index as corpus_index
    from rca.retrieval.tokens import tokenize

    index = corpus_index.current_index()
    docs = [tokenize(t) for t in index.chunk_texts] + [tokenize(t) for t in index.field_texts]
    build, reference = _timed(BM25Okapi, docs)
    times, same = [], True
    for sig in signals[:queries]:
        tokens = sig.bm25_tokens()
        seconds, expected = _timed(reference.get_scores, tokens)
        times.append(seconds)
        same &= bool(np.allclose(expected, index.bm25.scores(tokens)))
    row.rank_bm25 = (
        f"build {build:.1f} s, query p50 {statistics.median(times) * 1000:.1f} ms"
        f"{', same scores' if same else ', SCORES DIFFER'}"
    )
    del reference, docs
    gc.collect()


def _synthetic(size: int, options, base, model_name: str, signals, vectors) -> Row:
    import synthetic_corpus as synth
    from django.core.management import call_command
    from django.db import connection

    label = f"synthetic {size // 1000}k" if size >= 1000 else f"synthetic {size}"
    if options.signal_share != 1.0:
        label += f" s{options.signal_share:g}"
    row = Row(name=label)
    home = connection.settings_dict["NAME"]
    name = synth.database_name(size, options.signal_share)
    version = synth.version_for(size, options.seed, options.signal_share)
    reuse = False
    if options.keep and synth.database_exists(name):
        synth.use_database(name)
        reuse = (
            synth.stored_version() == version
            and synth.chunk_count() == size // synth.CHUNKS_PER_RUNBOOK * 4
        )
        synth.use_database(home)
    try:
        if reuse:
            synth.use_database(name)
            row.setup = f"reused {name}"
        else:
            synth.create_database(name)
            synth.use_database(name)
            call_command("migrate", interactive=False, verbosity=0)
            report = synth.populate(size, base, options.seed, model_name, options.signal_share)
            row.setup = synth.describe(report)
        print(f"  {row.name}: {row.setup}; building the worker index ...", flush=True)
        _build_index(row)
        row.hnsw_plan = _hnsw_plan(vectors[0])
        _measure(row, signals, vectors, options.repeat)
        if size <= options.rank_bm25_max:
            _rank_bm25(row, signals)
    finally:
        from rca.retrieval import index as corpus_index

        corpus_index._current = None
        synth.use_database(home)
        if not options.keep:
            synth.drop_database(name)
        gc.collect()
    return row


def _print(rows: list[Row], cases: int, repeat: int, start_load: str) -> None:
    print()
    print(f"machine: {os.cpu_count()} cores (shared); load 1/5/15 min at start {start_load}")
    print(
        f"{'corpus':<20}{'runbooks':>9}{'chunks':>8}  {'index build':>11}  "
        f"{'RSS +/total':>16}  {'plan':<8} setup (synthetic DB)"
    )
    for r in rows:
        rss = f"{r.rss_mib:.0f}/{r.rss_total_mib:.0f} MiB"
        print(
            f"{r.name:<20}{r.runbooks:>9}{r.chunks:>8}  {r.build_s:>9.2f} s  "
            f"{rss:>16}  {r.hnsw_plan:<8} {r.setup}"
        )
    print()
    print(f"latency per query, ms, p50 / p95 ({cases} dev incidents x {repeat}, warm process)")
    header = "".join(f"{p:>16}" for p in PARTS)
    print(f"{'corpus':<20}{header}  {'cand.':>6}  load during")
    for r in rows:
        cells = "".join(
            f"{f'{_p(r.times[p], 0.5):.2f} / {_p(r.times[p], 0.95):.2f}':>16}" for p in PARTS
        )
        print(f"{r.name:<20}{cells}  {r.candidates:>6.0f}  {r.load}")
    print()
    for r in rows:
        if r.rank_bm25 != "-":
            print(f"rank-bm25 on the {r.name} documents: {r.rank_bm25}")
    largest = max(rows, key=lambda r: r.chunks)
    p95 = _p(largest.times["search"], 0.95)
    verdict = "met" if p95 <= GOAL_MS else "NOT met"
    print(
        f"goal: search p95 <= {GOAL_MS:.0f} ms at {largest.chunks} chunks: {p95:.1f} ms, {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="10000,100000", help="synthetic chunk counts")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep (and reuse) synthetic DBs")
    parser.add_argument("--rank-bm25-max", type=int, default=10000)
    parser.add_argument(
        "--signal-share",
        type=float,
        default=1.0,
        help="share of synthetic runbooks keeping their base runbook's signal regexes",
    )
    options = parser.parse_args()
    start_load = _load()
    setup_django()

    import synthetic_corpus as synth

    from rca.corpus.embeddings import embed, embed_missing_chunks, model_name
    from rca.corpus.store import load_runbooks
    from rca.evaluation.run import case_incident, load_cases
    from rca.retrieval.signals import build_signals

    load_runbooks()
    seconds, embedded = _timed(embed_missing_chunks)
    print(f"bundled corpus: embedded {embedded} missing chunks in {seconds:.1f} s", flush=True)
    cases = load_cases(REPO / "tests" / "data" / "dev_cases.jsonl")
    signals = [build_signals(case_incident(case)) for case in cases]
    vectors = embed([s.embedding_text() for s in signals])

    bundled = Row(name="bundled")
    _build_index(bundled)
    bundled.hnsw_plan = _hnsw_plan(vectors[0])
    _measure(bundled, signals, vectors, options.repeat)
    if options.rank_bm25_max:
        _rank_bm25(bundled, signals)
    rows = [bundled]
    base = synth.read_base_corpus()
    for size in (int(s) for s in options.sizes.split(",") if s.strip()):
        rows.append(_synthetic(size, options, base, model_name(), signals, vectors))
    _print(rows, len(cases), options.repeat, start_load)


if __name__ == "__main__":
    main()
