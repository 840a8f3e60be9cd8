"""The bundled runbooks, stored and embedded for a test; each chunk text embedded once a run.

Transactional tests flush every table after each test, so each test that needs the
corpus stores it again. Storing is quick; embedding every chunk with the real model took
~20 s per test on the 2-core box, most of the integration suite's setup time. A vector
depends only on the model and the chunk's text, so the first test of the run computes
them and later tests write the same vectors back; a chunk whose text is new to the run
(a test's own runbook, an edited one) is still embedded by the model.

The same vectors also go into this run's on-disk embedding cache, so a `make run` the
suite starts (RCA_EMBEDDING_CACHE=`session_embedding_cache()`) reads them instead of
spending a minute embedding the corpus again in its worker.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

#: (model name, chunk text) -> embedding, for this pytest process.
_VECTORS: dict[tuple[str, str], Any] = {}
#: This run's embedding cache directory, made on first use, removed at exit.
_CACHE_DIR: list[Path] = []


def _cache_dir() -> Path:
    if not _CACHE_DIR:
        _CACHE_DIR.append(Path(tempfile.mkdtemp(prefix="rca-embedding-cache-")))
        atexit.register(shutil.rmtree, _CACHE_DIR[0], ignore_errors=True)
    return _CACHE_DIR[0]


def session_embedding_cache() -> Path:
    """This run's embedding cache, holding every bundled chunk's vector: those this run
    already computed, the rest embedded now (in-process). No database needed."""
    from rca.corpus import files
    from rca.corpus.embedding_cache import EmbeddingCache
    from rca.corpus.embeddings import embed, model_name
    from rca.models import EMBEDDING_DIM

    name = model_name()
    cache = EmbeddingCache(_cache_dir(), name, EMBEDDING_DIM)
    runbooks = files.load_directory(files.bundled_runbook_dir())
    texts = list(dict.fromkeys(c.text for rb in runbooks for c in files.chunk_runbook(rb)))
    new = [text for text in texts if (name, text) not in _VECTORS]
    _VECTORS.update(((name, text), vector) for text, vector in zip(new, embed(new), strict=True))
    cache.put_many((text, _VECTORS[name, text]) for text in texts)
    return cache.directory


def store_embedded_runbooks() -> None:
    """`load_runbooks()` then `embed_missing_chunks()`, as `make run` prepares the corpus."""
    from django.test import override_settings

    from rca.corpus.embeddings import embed_missing_chunks, model_name
    from rca.corpus.store import load_runbooks
    from rca.models import RunbookChunk

    load_runbooks()
    name = model_name()
    unembedded = RunbookChunk.objects.filter(embedding__isnull=True).only("pk", "text")
    known = [chunk for chunk in unembedded if (name, chunk.text) in _VECTORS]
    for chunk in known:
        chunk.embedding, chunk.embedding_model = _VECTORS[name, chunk.text], name
    RunbookChunk.objects.bulk_update(known, ["embedding", "embedding_model"])
    with override_settings(RCA_EMBEDDING_CACHE=str(_cache_dir())):  # not the user's cache
        embed_missing_chunks()
    embedded = RunbookChunk.objects.filter(embedding_model=name).values_list("text", "embedding")
    _VECTORS.update(((name, text), vector) for text, vector in embedded)
