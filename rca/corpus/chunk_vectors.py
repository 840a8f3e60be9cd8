"""Vectors written onto stored runbook chunks in one statement.

Django's ``bulk_update`` builds a ``CASE WHEN`` per row and field: for the bundled corpus
(1,411 chunks of 384 floats) that was ~2.3 s of Python compiling the statement, about
half the time of storing a corpus whose vectors come from the cache (every fresh
database: a second instance, a restore, each test that stores the corpus). One UPDATE
over ``unnest``-ed arrays writes the same values, in the field's own text form.

A first fill (no chunk has a vector yet, at least :data:`REBUILD_FROM` written at once)
drops the empty HNSW index and builds it again after the UPDATE, from its stored
definition: one build instead of an index insert per row, which was most of the time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["write_chunk_vectors"]

#: RunbookChunk's table and columns (rca/models.py); every value is a parameter.
_UPDATE = (
    "UPDATE rca_runbookchunk AS c SET embedding = v.e::vector, embedding_model = %s"
    " FROM unnest(%s::bigint[], %s::text[]) AS v(id, e) WHERE c.id = v.id"
)


def write_chunk_vectors(rows: Iterable[tuple[int, Sequence[float]]], model: str) -> int:
    """Set ``embedding`` (and ``embedding_model`` = ``model``) of each chunk ``(pk, vector)``;
    returns how many rows were written. A vector of the wrong size fails the whole
    statement, as the column's dimension check fails a single row."""
    from django.db import connection, transaction

    from rca.models import RunbookChunk

    field = RunbookChunk._meta.get_field("embedding")
    ids: list[int] = []
    texts: list[str] = []
    for pk, vector in rows:
        ids.append(pk)
        texts.append(str(field.get_prep_value(vector)))
    if not ids:
        return 0
    with transaction.atomic(), connection.cursor() as cursor:
        rebuilt = _first_fill_indexes(cursor) if len(ids) >= REBUILD_FROM else []
        for name, _ in rebuilt:
            cursor.execute(f"DROP INDEX {connection.ops.quote_name(name)}")
        cursor.execute(_UPDATE, [model, ids, texts])
        written = int(cursor.rowcount)
        if rebuilt:  # CREATE INDEX refuses a table with deferred FK checks still queued
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for _, definition in rebuilt:
            cursor.execute(definition)
    return written


#: Vectors written at once into a table that holds none, from which building the HNSW
#: index afresh beats inserting each row into it (1,411 chunks: ~5 s -> ~1.6 s under
#: load 10, the UPDATE's time being almost all index inserts on the server).
REBUILD_FROM = 200


def _first_fill_indexes(cursor: Any) -> list[tuple[str, str]]:
    """(name, CREATE INDEX statement, as stored) of each HNSW index on the chunk table,
    when no chunk has a vector yet (the index is empty: dropping it hides nothing from a
    search); else none. The table lock comes first, so two processes filling at once take
    turns instead of deadlocking on the DROP; readers are not blocked until the DROP, and
    only for this transaction."""
    cursor.execute("LOCK TABLE rca_runbookchunk IN SHARE ROW EXCLUSIVE MODE")
    cursor.execute("SELECT EXISTS (SELECT 1 FROM rca_runbookchunk WHERE embedding IS NOT NULL)")
    if cursor.fetchone()[0]:
        return []
    cursor.execute(
        "SELECT indexname, indexdef FROM pg_indexes"
        " WHERE tablename = 'rca_runbookchunk' AND indexdef ILIKE %s",
        ["% USING hnsw %"],
    )
    return [(name, definition) for name, definition in cursor.fetchall()]
