"""Retrieval latency: incident -> ranked runbooks in a warm process, and BM25 at scale.

    .venv/bin/python bench/retrieval.py [--repeat 5] [--sizes 1000,10000,100000]

Prints: index build time for the stored (bundled) corpus; p50/p95 per query of the BM25
part, the vector part (pgvector HNSW + exact candidate cosine) and the whole fused search,
over the dev cases; then BM25 alone on synthetic corpora (our inverted index vs rank-bm25,
the latter only up to 10k: it needs ~0.6 s per query at 100k).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from _env import REPO, setup_django


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"p50 {statistics.median(ordered) * 1000:7.2f} ms   p95 {p95 * 1000:7.2f} ms"


def _timed(fn, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="1000,10000")
    options = parser.parse_args()
    setup_django()

    from rank_bm25 import BM25Okapi

    from rca import corpus_index, retrieval
    from rca.embeddings import embed, embed_missing_chunks
    from rca.eval_run import case_incident, load_cases
    from rca.runbook_store import load_runbooks
    from rca.signals import build_signals
    from rca.tokens import tokenize

    load_runbooks()
    seconds, embedded = _timed(embed_missing_chunks)
    print(f"corpus: embedded {embedded} missing chunks in {seconds:.1f} s")
    version = corpus_index.current_index().version
    builds = [_timed(corpus_index._index_from_db, version)[0] for _ in range(3)]
    index = corpus_index.current_index()
    print(
        f"corpus: {len(index)} runbooks, {len(index.chunk_texts)} chunks; "
        f"index build (DB read + tokenise + BM25) {min(builds) * 1000:.0f} ms"
    )

    cases = load_cases(REPO / "tests" / "data" / "dev_cases.jsonl")
    signals = [build_signals(case_incident(case)) for case in cases]
    vectors = embed([s.embedding_text() for s in signals])
    retrieval.search(signals[0], vectors[0], index=index)  # warm the connection and caches
    bm25_t, vector_t, fused_t = [], [], []
    for _ in range(options.repeat):
        for sig, vector in zip(signals, vectors, strict=True):
            bm25_t.append(_timed(index.bm25_scores, sig.bm25_tokens())[0])
            query = retrieval._unit(vector)
            vector_t.append(_timed(retrieval._db_chunk_cosines, index, query, set())[0])
            fused_t.append(_timed(retrieval.search, sig, vector)[0])
    print(f"query BM25 part        {_ms(bm25_t)}")
    print(f"query vector part      {_ms(vector_t)}")
    print(f"query fused (search)   {_ms(fused_t)}   (includes the corpus-version check)")

    rng = random.Random(7)
    vocab = sorted({token for text in index.chunk_texts for token in tokenize(text)})
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    queries = [s.bm25_tokens() for s in signals]
    for size in (int(s) for s in options.sizes.split(",") if s):
        docs = [rng.choices(vocab, weights, k=80) for _ in range(size)]
        start = time.perf_counter()
        reference = BM25Okapi(docs)
        seconds = time.perf_counter() - start
        ref_t = [_timed(reference.get_scores, q)[0] for q in queries[:10]]
        print(f"rank-bm25 @{size:>6} chunks: build {seconds:6.2f} s; query {_ms(ref_t)}")


if __name__ == "__main__":
    main()
