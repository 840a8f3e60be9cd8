"""Synthetic runbook corpora for the retrieval bench, each in a database of its own.

A synthetic corpus of N chunks is N/4 runbooks of 4 chunks (Symptoms / Diagnosis /
Remediation / Verify). Each runbook copies a bundled runbook's metadata (failure class, tags,
front-matter signal regexes) and its chunk texts are words drawn from the bundled chunks:
60% from that base runbook's words, 40% from the whole bundled corpus, at the bundled chunks'
lengths — so BM25 posting lists and document lengths look like a real corpus (by default
every synthetic runbook keeps its base's regexes: see ``populate``). Embeddings are
real embeddings of the bundled chunks (the base runbook's chunk of the same section, mixed
with a random other chunk) plus Gaussian noise, re-normalised: computing 100k real ones would
take ~12 minutes here.

The corpus lives in a separate database (``rca_synth_<N>``) in the bench cluster, migrated
like the real one, so the bench database and its bundled corpus are never touched. Chunks go
in with binary COPY into the table without its HNSW index; the index is then built with the
real definition (read from the migrated schema) at ``maintenance_work_mem = 1GB``.
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SECTIONS = ("Symptoms", "Diagnosis", "Remediation", "Verify")
CHUNKS_PER_RUNBOOK = len(SECTIONS)
HNSW_INDEX = "chunk_embedding_hnsw"
MAINTENANCE_WORK_MEM = "1GB"
FORMAT = "synthetic-v1"  # bump when generation changes: kept databases are rebuilt


@dataclass
class BaseCorpus:
    """The bundled corpus as read from the bench database: the material for synthesis."""

    runbooks: list[dict[str, Any]]
    chunk_runbook: list[int]  # runbook position of each chunk
    chunk_sections: list[str]
    chunk_words: list[list[str]]  # body words of each chunk (title line dropped)
    embeddings: np.ndarray  # chunk x dim, unit rows
    runbook_words: list[list[str]] = field(default_factory=list)
    all_words: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.runbook_words = [[] for _ in self.runbooks]
        for position, words in zip(self.chunk_runbook, self.chunk_words, strict=True):
            self.runbook_words[position].extend(words)
        self.all_words = [w for words in self.chunk_words for w in words]


@dataclass
class SetupReport:
    database: str
    runbooks: int
    chunks: int
    reused: bool = False
    generate_s: float = 0.0
    insert_s: float = 0.0
    hnsw_s: float = 0.0


def read_base_corpus() -> BaseCorpus:
    """The stored (bundled) corpus with its embeddings; call it on the bench database."""
    from rca.models import Runbook, RunbookChunk

    runbooks = list(
        Runbook.objects.order_by("slug").values(
            "id", "slug", "title", "failure_class", "frameworks", "signals", "tags"
        )
    )
    position = {row["id"]: i for i, row in enumerate(runbooks)}
    rows = list(
        RunbookChunk.objects.filter(embedding__isnull=False)
        .order_by("runbook__slug", "ordinal")
        .values_list("runbook_id", "section", "text", "embedding")
    )
    if not rows:
        raise SystemExit("the bench database has no embedded chunks: load the corpus first")
    return BaseCorpus(
        runbooks=runbooks,
        chunk_runbook=[position[r[0]] for r in rows],
        chunk_sections=[r[1] for r in rows],
        chunk_words=[r[2].split("\n", 1)[-1].split() for r in rows],
        embeddings=np.array([np.asarray(r[3], dtype=np.float32) for r in rows]),
    )


def database_name(size: int, signal_share: float = 1.0) -> str:
    share = "" if signal_share == 1.0 else f"_s{signal_share:g}".replace(".", "p")
    return f"rca_synth_{size}{share}"


def version_for(size: int, seed: int, signal_share: float = 1.0) -> str:
    return f"{FORMAT}-{size}-seed{seed}-signals{signal_share:g}"


def _admin_cursor():
    from django.db import connection

    return connection.cursor()


def database_exists(name: str) -> bool:
    with _admin_cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        return cursor.fetchone() is not None


def create_database(name: str) -> None:
    with _admin_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cursor.execute(f'CREATE DATABASE "{name}"')


def drop_database(name: str) -> None:
    with _admin_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')


def use_database(name: str) -> None:
    """Point Django's default connection at another database of the same cluster."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name


def stored_version() -> str:
    from rca.corpus.store import current_version

    return current_version()


def _chunk_texts(
    base: BaseCorpus, bases: list[int], rng: random.Random
) -> tuple[list[str], list[str], list[int]]:
    """(titles, chunk texts, base chunk index per chunk) for runbooks built on ``bases``."""
    by_section: dict[tuple[int, str], list[int]] = {}
    for index, (position, section) in enumerate(
        zip(base.chunk_runbook, base.chunk_sections, strict=True)
    ):
        by_section.setdefault((position, section), []).append(index)
    by_runbook: dict[int, list[int]] = {}
    for index, position in enumerate(base.chunk_runbook):
        by_runbook.setdefault(position, []).append(index)
    lengths = [len(words) for words in base.chunk_words]

    titles, texts, base_chunks = [], [], []
    for number, position in enumerate(bases):
        row = base.runbooks[position]
        own = base.runbook_words[position] or base.all_words
        extra = rng.sample(own, min(2, len(own)))
        title = f"{row['title']} ({' '.join(extra)}, variant {number})"
        titles.append(title)
        for section in SECTIONS:
            candidates = by_section.get((position, section)) or by_runbook[position]
            chunk = rng.choice(candidates)
            length = max(8, lengths[rng.randrange(len(lengths))])
            local = round(length * 0.6)
            words = rng.choices(own, k=local) + rng.choices(base.all_words, k=length - local)
            rng.shuffle(words)
            lines = [" ".join(words[i : i + 14]) for i in range(0, len(words), 14)]
            texts.append(f"{title} — {section}\n" + "\n".join(lines))
            base_chunks.append(chunk)
    return titles, texts, base_chunks


def _embeddings(base: BaseCorpus, base_chunks: list[int], seed: int) -> np.ndarray:
    """Embedding-like unit vectors: a real chunk embedding, a random share of another one,
    Gaussian noise (cosine to the base chunk ~0.8-0.95)."""
    rng = np.random.default_rng(seed)
    count, dim = len(base_chunks), base.embeddings.shape[1]
    own = base.embeddings[np.asarray(base_chunks)]
    other = base.embeddings[rng.integers(0, len(base.embeddings), count)]
    share = rng.uniform(0.0, 0.5, (count, 1)).astype(np.float32)
    vectors = own + share * other + rng.normal(0.0, 0.02, (count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32)


def _index_definition() -> str:
    with _admin_cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [HNSW_INDEX])
        row = cursor.fetchone()
    if row is None:
        raise SystemExit(f"index {HNSW_INDEX} not found after migrate")
    return row[0]


def populate(
    size: int, base: BaseCorpus, seed: int, model_name: str, signal_share: float = 1.0
) -> SetupReport:
    """Fill the (freshly migrated, empty) current database with a corpus of ``size`` chunks.

    ``signal_share``: the fraction of runbooks that keep their base runbook's signal
    regexes (1.0, the default, is the pessimistic case: each bundled regex then matches
    ~N/340 runbooks, and every signal-matched runbook is scored exactly by the vector part).
    """
    from django.db import connection, transaction
    from pgvector.psycopg import register_vector

    from rca.models import CorpusState, Runbook

    runbook_count = size // CHUNKS_PER_RUNBOOK
    report = SetupReport(
        database=connection.settings_dict["NAME"], runbooks=runbook_count, chunks=0
    )
    rng = random.Random(seed)

    start = time.perf_counter()
    bases = [rng.randrange(len(base.runbooks)) for _ in range(runbook_count)]
    with_signals = [rng.random() < signal_share for _ in range(runbook_count)]
    titles, texts, base_chunks = _chunk_texts(base, bases, rng)
    vectors = _embeddings(base, base_chunks, seed)
    report.generate_s = time.perf_counter() - start

    definition = _index_definition()
    start = time.perf_counter()
    with transaction.atomic():
        with _admin_cursor() as cursor:
            cursor.execute(f"DROP INDEX {HNSW_INDEX}")
        rows = []
        for number, (position, title) in enumerate(zip(bases, titles, strict=True)):
            meta = base.runbooks[position]
            body = "\n\n".join(
                texts[number * CHUNKS_PER_RUNBOOK : (number + 1) * CHUNKS_PER_RUNBOOK]
            )
            rows.append(
                Runbook(
                    slug=f"synth-{number:06d}-{meta['slug']}"[:120],
                    title=title[:255],
                    failure_class=meta["failure_class"],
                    frameworks=meta["frameworks"],
                    signals=meta["signals"] if with_signals[number] else [],
                    tags=meta["tags"],
                    body=body,
                    checksum=hashlib.sha256(body.encode()).hexdigest(),
                )
            )
        created = Runbook.objects.bulk_create(rows, batch_size=2000)
        raw = connection.connection
        register_vector(raw)
        copy_sql = (
            "COPY rca_runbookchunk (runbook_id, ordinal, section, text, embedding,"
            " embedding_model) FROM STDIN WITH (FORMAT BINARY)"
        )
        with raw.cursor() as cursor, cursor.copy(copy_sql) as copy:
            copy.set_types(["int8", "int4", "varchar", "text", "vector", "varchar"])
            for chunk_number, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
                runbook = created[chunk_number // CHUNKS_PER_RUNBOOK]
                ordinal = chunk_number % CHUNKS_PER_RUNBOOK
                copy.write_row((runbook.pk, ordinal, SECTIONS[ordinal], text, vector, model_name))
        report.chunks = len(texts)
        CorpusState.objects.update_or_create(
            pk=1, defaults={"version": version_for(size, seed, signal_share)}
        )
    report.insert_s = time.perf_counter() - start

    start = time.perf_counter()
    with _admin_cursor() as cursor:
        cursor.execute(f"SET maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
        cursor.execute(definition)
        cursor.execute("RESET maintenance_work_mem")
    report.hnsw_s = time.perf_counter() - start
    with _admin_cursor() as cursor:
        cursor.execute("ANALYZE rca_runbook")
        cursor.execute("ANALYZE rca_runbookchunk")
    return report


def chunk_count() -> int:
    from rca.models import RunbookChunk

    return RunbookChunk.objects.count()


def describe(report: SetupReport) -> str:
    if report.reused:
        return f"reused {report.database}"
    return (
        f"gen {report.generate_s:.1f} s, insert {report.insert_s:.1f} s, HNSW {report.hnsw_s:.1f} s"
    )
