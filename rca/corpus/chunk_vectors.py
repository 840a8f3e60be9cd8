"""Vectors written onto stored runbook chunks in one statement.

Django's ``bulk_update`` builds a ``CASE WHEN`` per row and field: for the bundled corpus
(1,411 chunks of 384 floats) that was ~2.3 s of Python compiling the statement, about
half the time of storing a corpus whose vectors come from the cache (every fresh
database: a second instance, a restore, each test that stores the corpus). One UPDATE
over ``unnest``-ed arrays writes the same values, in the field's own text form.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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
    from django.db import connection

    from rca.models import RunbookChunk

    field = RunbookChunk._meta.get_field("embedding")
    ids: list[int] = []
    texts: list[str] = []
    for pk, vector in rows:
        ids.append(pk)
        texts.append(str(field.get_prep_value(vector)))
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(_UPDATE, [model, ids, texts])
        return int(cursor.rowcount)
