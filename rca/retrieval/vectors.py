"""The stored chunk embeddings held in the worker: exact cosine without reading the table.

The vector part of hybrid retrieval scores every chunk of its candidate runbooks (HNSW's
nearest plus BM25's best plus every signal-matched one: ~1,300 chunks a query on average
at 100k chunks, ~4,200 for the broadest dev incident). In PostgreSQL that read as many
random heap rows of ~3 kB (text and vector): 30-50 ms a query, most of the 50 ms budget,
and the p95 tail (~100 ms) whenever those pages had left shared buffers. Here the same
float32 vectors sit in one matrix (1.5 kB a chunk: ~150 MiB at 100k chunks) and the cosine
is pgvector's formula (float32 dot product, float64 ``dot / sqrt(|a|^2 |q|^2)``, clamped to
[-1, 1]). Only the summation order differs (pgvector 0.6 sums in SIMD lanes): values differ
from the SQL's by at most ~1.5e-7, below any gap between two runbooks' scores
(``bench/retrieval_exact.py`` compares the rankings at 100k chunks).

Only vectors of this process' embedding model are kept (``embedding_model``): a chunk
without one (not embedded yet, or by another model before a re-embedding) is read from
the database when it is a candidate, as before, and kept once it has one. A chunk's vector
never changes under the same model and text (new text is a new chunk and corpus version).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ChunkVectors", "pgvector_cosines", "vectors_for"]

_BATCH = 5000  # rows per fetch while loading: bounds the transient bytes held at once


def pgvector_cosines(rows: np.ndarray, squared_norms: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``1 - (a <=> query)`` for each row ``a`` of ``rows`` (n x dim, float32) whose squared
    norms are ``squared_norms``, in pgvector's formula: float32 dot product, then
    ``dot / sqrt(|a|^2 |q|^2)`` in float64, clamped to [-1, 1]."""
    q = np.asarray(query, dtype=np.float32)
    # einsum, not ``rows @ q``: OpenBLAS runs a matrix-vector product on all its threads,
    # which on 2 busy cores cost ~35 ms a query (its spinning threads also starved the
    # database) instead of ~1 ms.
    dot = np.einsum("ij,j->i", rows, q).astype(np.float64)
    q_norm = float(np.dot(q.astype(np.float64), q.astype(np.float64)))
    with np.errstate(divide="ignore", invalid="ignore"):
        similarity = dot / np.sqrt(squared_norms * q_norm)
    result: np.ndarray = np.clip(similarity, -1.0, 1.0)
    return result


def _squared_norms(rows: np.ndarray) -> np.ndarray:
    wide = rows.astype(np.float64)
    result: np.ndarray = np.einsum("ij,ij->i", wide, wide)
    return result


class ChunkVectors:
    """Embeddings of an index's chunks by chunk position (rows), with their squared norms;
    ``held`` says which rows hold a vector of this process' model."""

    def __init__(self, chunk_ids: Sequence[int | None], dim: int, model: str) -> None:
        self.model = model
        self.chunk_ids = np.array([-1 if c is None else c for c in chunk_ids], dtype=np.int64)
        self.rows = np.zeros((len(chunk_ids), dim), dtype=np.float32)
        self.squared_norms = np.zeros(len(chunk_ids), dtype=np.float64)
        self.held = np.zeros(len(chunk_ids), dtype=bool)

    def load(self, chunk_position: Mapping[int, int]) -> None:
        """Read every stored vector of this model (binary ``vector_send``: no text parsing)."""
        from django.db import connection, transaction

        sql, params = self._select("embedding_model = %s", [self.model])
        with transaction.atomic(), connection.chunked_cursor() as cursor:
            cursor.execute(sql, params)
            while rows := cursor.fetchmany(_BATCH):
                self._store(rows, chunk_position)

    def _select(self, where: str, params: list[Any]) -> tuple[str, list[Any]]:
        from django.db import connection

        from rca.models import RunbookChunk

        table = connection.ops.quote_name(RunbookChunk._meta.db_table)
        sql = (
            f"SELECT id, vector_send(embedding), embedding_model FROM {table}"  # noqa: S608
            f" WHERE embedding IS NOT NULL AND {where}"
        )
        return sql, params

    def _store(
        self, rows: Sequence[tuple[int, bytes, str]], chunk_position: Mapping[int, int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(positions, their vectors) of the ``rows`` that belong to the index; those of this
        model are held from now on."""
        found = [(chunk_position[r[0]], r[1], r[2]) for r in rows if r[0] in chunk_position]
        dim = self.rows.shape[1]
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros((0, dim), dtype=np.float32)
        positions = np.array([f[0] for f in found], dtype=np.int64)
        # vector_send: int16 dim, int16 unused, then dim big-endian float4
        raw = np.frombuffer(b"".join(bytes(f[1])[4:] for f in found), dtype=">f4")
        block = raw.reshape(len(found), dim).astype(np.float32)
        mine = np.array([f[2] == self.model for f in found], dtype=bool)
        if mine.any():
            self.rows[positions[mine]] = block[mine]
            self.squared_norms[positions[mine]] = _squared_norms(block[mine])
            self.held[positions[mine]] = True
        return positions, block

    def cosines(
        self, positions: np.ndarray, query: np.ndarray, chunk_position: Mapping[int, int]
    ) -> np.ndarray:
        """Cosine of ``query`` with each chunk at ``positions``; NaN for a chunk without a
        stored vector. Chunks not held are read from the database (one statement)."""
        result = np.full(len(positions), np.nan)
        held = self.held[positions]
        if held.any():
            at = positions[held]
            result[held] = pgvector_cosines(self.rows[at], self.squared_norms[at], query)
        if not held.all():
            missing = positions[~held]
            found, block = self._read(missing, chunk_position)
            if len(found):
                slot = {int(p): i for i, p in enumerate(positions.tolist())}
                values = pgvector_cosines(block, _squared_norms(block), query)
                result[[slot[int(p)] for p in found]] = values
        return result

    def _read(
        self, positions: np.ndarray, chunk_position: Mapping[int, int]
    ) -> tuple[np.ndarray, np.ndarray]:
        from django.db import connection

        sql, params = self._select("id = ANY(%s)", [self.chunk_ids[positions].tolist()])
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return self._store(cursor.fetchall(), chunk_position)


def vectors_for(
    chunk_ids: Sequence[int | None], chunk_position: Mapping[int, int], *, load: bool
) -> ChunkVectors:
    """A holder of these chunks' vectors for this process' embedding model, filled from the
    database now when ``load`` (a worker's stored-corpus index), else as chunks come."""
    from rca.corpus.embeddings import model_name
    from rca.models import EMBEDDING_DIM

    vectors = ChunkVectors(chunk_ids, EMBEDDING_DIM, model_name())
    if load:
        vectors.load(chunk_position)
    return vectors
