"""A first fill of the corpus vectors builds the HNSW index afresh; later writes keep it."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from rca.corpus.chunk_vectors import REBUILD_FROM, write_chunk_vectors
from rca.corpus.embeddings import model_name
from rca.models import RunbookChunk
from tests.support.corpus import store_embedded_runbooks

pytestmark = pytest.mark.django_db(transaction=True)


def hnsw_index() -> tuple[int, str]:
    """(oid, definition) of the chunk table's HNSW index."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.oid, pg_get_indexdef(c.oid) FROM pg_class c"
            " WHERE c.relname = 'chunk_embedding_hnsw'"
        )
        [row] = cursor.fetchall()
    return row


def nearest_distance(vector: list[float]) -> float:
    """The cosine distance of the row an index scan puts first (sequential scans off)."""
    literal = "[" + ",".join(map(str, vector)) + "]"
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            cursor.execute(
                f"SELECT embedding <=> '{literal}'::vector AS d FROM rca_runbookchunk"  # noqa: S608
                " ORDER BY d LIMIT 1"
            )
            return float(cursor.fetchone()[0])
        finally:
            cursor.execute("RESET enable_seqscan")


def test_a_first_fill_rebuilds_the_index_with_the_same_definition_and_every_vector():
    store_embedded_runbooks()
    stored = dict(RunbookChunk.objects.values_list("pk", "embedding"))
    assert len(stored) >= REBUILD_FROM
    oid, definition = hnsw_index()

    RunbookChunk.objects.update(embedding=None)  # an empty index again: a first fill
    assert write_chunk_vectors(stored.items(), model_name()) == len(stored)

    new_oid, new_definition = hnsw_index()
    assert new_oid != oid and new_definition == definition  # built again, as migrated
    after = dict(RunbookChunk.objects.values_list("pk", "embedding"))
    assert after.keys() == stored.keys()
    assert all(np.array_equal(after[pk], stored[pk]) for pk in stored)
    some = sorted(stored)[:: max(1, len(stored) // 20)]
    assert all(nearest_distance(list(map(float, stored[pk]))) < 1e-6 for pk in some)


def test_writes_into_a_filled_index_keep_it():
    store_embedded_runbooks()
    oid, _ = hnsw_index()
    rows = list(RunbookChunk.objects.values_list("pk", "embedding"))
    half = rows[: len(rows) // 2]
    RunbookChunk.objects.filter(pk__in=[pk for pk, _ in half]).update(embedding=None)
    assert len(half) >= REBUILD_FROM
    assert write_chunk_vectors(half, model_name()) == len(half)
    assert hnsw_index()[0] == oid  # inserted into, not rebuilt: other vectors were searchable
