"""The vector part on held vectors ranks as pgvector's SQL did (real PostgreSQL, real model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from django.db import connection

from rca.corpus.embeddings import embed
from rca.evaluation.run import case_incident, load_cases
from rca.models import RunbookChunk
from rca.retrieval import hybrid
from rca.retrieval import index as corpus_index
from rca.retrieval.signals import build_signals
from rca.retrieval.vectors import vectors_for
from tests.support.corpus import store_embedded_runbooks

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


@pytest.fixture(scope="module")
def stored(django_db_setup, django_db_blocker) -> None:
    with django_db_blocker.unblock():
        store_embedded_runbooks()


@pytest.fixture(scope="module")
def queries() -> list[tuple[object, list[float]]]:
    signals = [build_signals(case_incident(case)) for case in load_cases(DEV_CASES)]
    vectors = embed([s.embedding_text() for s in signals])
    return list(zip(signals, vectors, strict=True))


def _sql_cosines(index: corpus_index.CorpusIndex, query: np.ndarray, chunks: np.ndarray):
    """pgvector's own cosine of each chunk at ``chunks`` (NaN without an embedding)."""
    vector = "[" + ",".join(map(str, query.tolist())) + "]"
    ids = [index.chunk_ids[p] for p in chunks.tolist()]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, 1 - (embedding <=> %s::vector) FROM rca_runbookchunk"
            " WHERE id = ANY(%s) AND embedding IS NOT NULL",
            [vector, ids],
        )
        found = dict(cursor.fetchall())
    return np.array([found.get(i, np.nan) for i in ids], dtype=np.float64)


@pytest.mark.django_db
def test_held_vectors_score_and_rank_like_pgvector(stored, queries) -> None:
    corpus_index._current = None
    index = corpus_index.current_index()
    assert index.stored_vectors is not None and index.stored_vectors.held.all()
    for signals, vector in queries:
        evidence = hybrid.gather(signals, vector, index)
        scored = np.flatnonzero(~np.isnan(evidence.chunk_cos))
        assert scored.size  # the HNSW candidates at least
        expected = _sql_cosines(index, hybrid.unit_vector(vector), scored)
        assert np.abs(expected - evidence.chunk_cos[scored]).max() < 1e-6
        chunk_cos = np.full(len(index.chunk_ids), np.nan)
        chunk_cos[scored] = expected
        sql_evidence = hybrid.Evidence(
            evidence.bm25,
            evidence.chunk_bm25,
            hybrid._per_runbook_max(index, chunk_cos),
            chunk_cos,
            evidence.signal,
        )
        for mode in ("hybrid", "dense"):
            assert (
                hybrid.rank(evidence, mode=mode, k=10)[0]
                == hybrid.rank(sql_evidence, mode=mode, k=10)[0]
            )


@pytest.mark.django_db
def test_a_chunk_embedded_after_the_index_was_built_is_read_then_held(stored, queries) -> None:
    corpus_index._current = None
    index = corpus_index.current_index()
    signals, vector = queries[0]
    scored = np.flatnonzero(~np.isnan(hybrid.gather(signals, vector, index).chunk_cos))
    late = int(scored[0])
    stored_vector = list(RunbookChunk.objects.get(pk=index.chunk_ids[late]).embedding)
    RunbookChunk.objects.filter(pk=index.chunk_ids[late]).update(embedding=None)
    index.stored_vectors = vectors_for(index.chunk_ids, index.chunk_position, load=True)
    assert not index.stored_vectors.held[late]
    assert np.isnan(hybrid.gather(signals, vector, index).chunk_cos[late])  # like the SQL
    RunbookChunk.objects.filter(pk=index.chunk_ids[late]).update(embedding=stored_vector)
    cosine = hybrid.gather(signals, vector, index).chunk_cos[late]
    assert cosine == pytest.approx(
        float(_sql_cosines(index, hybrid.unit_vector(vector), np.array([late]))[0]), abs=1e-6
    )
    assert index.stored_vectors.held[late]
    corpus_index._current = None


@pytest.mark.django_db
def test_the_hnsw_search_gets_its_ef_search_in_the_same_round_trip(stored, queries) -> None:
    _, vector = queries[0]
    corpus_index.current_index()
    with connection.cursor() as cursor:
        cursor.execute("SET hnsw.ef_search = 41")
        nearest = hybrid._nearest_runbook_ids(hybrid.unit_vector(vector))
        assert len(nearest) == hybrid.DENSE_CANDIDATES
        cursor.execute("SHOW hnsw.ef_search")  # SET LOCAL: the test's transaction is open
        assert cursor.fetchone() == (str(hybrid.EF_SEARCH),)
