"""Do the held vectors rank like the SQL did? Old vs new vector part on a synthetic corpus.

    .venv/bin/python bench/retrieval_exact.py [--size 100000] [--repeat 1]

Needs the synthetic database ``bench/retrieval.py --sizes N --keep`` left behind. Per
dev-set incident: the cosines of the pre-issue-15 vector part (one SQL statement: HNSW
candidates, then pgvector's exact ``<=>`` over their chunks, kept below as the reference)
against :func:`rca.retrieval.hybrid._db_chunk_cosines` (HNSW candidates, cosine on the
vectors the index holds): the same chunks scored (NaN pattern), the largest cosine
difference, and the top 10 runbooks of the default hybrid ranking and of dense-only mode
under each, compared in order, with their shown (rounded) scores.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from _env import REPO, setup_django


def _sql_chunk_cosines(index, query: np.ndarray, extra: set[int]) -> np.ndarray:
    """The vector part as it was: every candidate chunk's cosine computed by pgvector."""
    from django.db import connection, transaction

    from rca.models import RunbookChunk
    from rca.retrieval import hybrid

    table = connection.ops.quote_name(RunbookChunk._meta.db_table)
    vector = "[" + ",".join(map(str, query.tolist())) + "]"
    extra_ids = [i for p in extra if (i := index.runbook_ids[p]) is not None]
    sql = f"""
        WITH nearest AS MATERIALIZED (
            SELECT runbook_id FROM {table} ORDER BY embedding <=> %s::vector LIMIT %s
        )
        SELECT id, embedding <=> %s::vector FROM {table}
        WHERE embedding IS NOT NULL
          AND runbook_id = ANY(ARRAY(SELECT runbook_id FROM nearest) || %s::bigint[])
    """  # noqa: S608 - the table name is ours; values are parameters
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.ef_search = %s", [hybrid.EF_SEARCH])
        cursor.execute(sql, [vector, hybrid.DENSE_CANDIDATES, vector, extra_ids])
        rows = cursor.fetchall()
    cosines = np.full(len(index.chunk_ids), np.nan)
    for chunk_id, distance in rows:
        position = index.chunk_position.get(chunk_id)
        if position is not None:
            cosines[position] = 1.0 - distance
    return cosines


def _shown(index, ev, order, fused) -> list[tuple[str, float, float]]:
    return [
        (index.slugs[p], round(float(np.nan_to_num(ev.cosine[p])), 4), round(float(fused[p]), 6))
        for p in order
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--repeat", type=int, default=1)
    options = parser.parse_args()
    setup_django()

    import synthetic_corpus as synth

    from rca.corpus.embeddings import embed
    from rca.evaluation.run import case_incident, load_cases
    from rca.retrieval import hybrid
    from rca.retrieval import index as corpus_index
    from rca.retrieval.signals import build_signals

    cases = load_cases(REPO / "tests" / "data" / "dev_cases.jsonl")
    signals = [build_signals(case_incident(case)) for case in cases]
    vectors = embed([s.embedding_text() for s in signals])
    name = synth.database_name(options.size)
    if not synth.database_exists(name):
        sys.exit(f"no database {name}: run bench/retrieval.py --sizes {options.size} --keep")
    synth.use_database(name)
    index = corpus_index.current_index()
    worst, scored, same_nan, orders, shown = 0.0, 0, 0, 0, 0
    runs = 0
    for _ in range(options.repeat):
        for sig, vector in zip(signals, vectors, strict=True):
            query = hybrid.unit_vector(vector)
            evidence = {}
            for label, part in (("sql", _sql_chunk_cosines), ("held", hybrid._db_chunk_cosines)):
                original = hybrid._db_chunk_cosines
                hybrid._db_chunk_cosines = part
                try:
                    evidence[label] = hybrid.gather(sig, vector, index)
                finally:
                    hybrid._db_chunk_cosines = original
            old, new = evidence["sql"], evidence["held"]
            same_nan += bool(np.array_equal(np.isnan(old.chunk_cos), np.isnan(new.chunk_cos)))
            both = ~np.isnan(old.chunk_cos) & ~np.isnan(new.chunk_cos)
            scored += int(both.sum())
            if both.any():
                worst = max(worst, float(np.abs(old.chunk_cos[both] - new.chunk_cos[both]).max()))
            for mode in ("hybrid", "dense"):
                runs += 1
                a = hybrid.rank(old, mode=mode, k=10)
                b = hybrid.rank(new, mode=mode, k=10)
                orders += a[0] == b[0]
                shown += _shown(index, old, *a) == _shown(index, new, *b)
            del query
    total = len(signals) * options.repeat
    print(f"{options.size} chunks, {total} queries ({len(signals)} dev incidents)")
    print(f"same chunks scored: {same_nan}/{total}; chunk cosines compared: {scored}")
    print(f"largest |cosine difference|: {worst:.3g}")
    print(f"top-10 order identical (hybrid and dense): {orders}/{runs}")
    print(f"top-10 shown scores identical (cosine 4, fused 6 decimals): {shown}/{runs}")


if __name__ == "__main__":
    main()
