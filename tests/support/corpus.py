"""The bundled runbooks, stored and embedded for a test; each chunk text embedded once a machine.

Transactional tests flush every table after each test, so each test that needs the
corpus stores it again. Storing is quick; embedding every chunk with the real model takes
60-100 s on the 2-core box. A vector depends only on the model and the chunk's text, so
the tests share one product embedding cache (:mod:`rca.corpus.embedding_cache`) kept in
the run's data dir, `$RCA_DATA_DIR/embedding-cache` (under xdist the controller's, not a
worker's `gwN`: both processes use it). The first process that needs the corpus embeds it
under the cache's fill lock; the other waits and reads those vectors; a later run on the
same data dir (until `make clean`) embeds nothing. Within a process the vectors are also
kept in memory, so later tests write them back without reading the cache. A chunk whose
text is new (a test's own runbook, an edited one) is still embedded by the model, and the
cache tests (tests/integration/test_embedding_cache_reuse.py) embed into caches of their
own.

A `make run` the suite starts (RCA_EMBEDDING_CACHE=`session_embedding_cache()`) reads the
same cache instead of spending a minute embedding the corpus again in its worker.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

#: The shared cache directory (tests/conftest.py sets it for xdist workers).
CACHE_ENV = "RCA_TEST_EMBEDDING_CACHE"
#: (model name, chunk text) -> embedding, for this pytest process.
_VECTORS: dict[tuple[str, str], Any] = {}
#: The cache directory, found on first use; a temporary one without a data dir.
_CACHE_DIR: list[Path] = []
#: Cache model ids whose bundled corpus this process saw complete in the cache.
_COMPLETE: set[str] = set()


def shared_cache_dir(data_dir: str) -> str:
    """The test run's embedding cache for a (controller's) RCA_DATA_DIR."""
    return os.path.join(data_dir, "embedding-cache")


def _cache_dir() -> Path:
    if not _CACHE_DIR:
        configured = os.environ.get(CACHE_ENV) or (
            shared_cache_dir(os.environ["RCA_DATA_DIR"]) if os.environ.get("RCA_DATA_DIR") else ""
        )
        if configured:
            _CACHE_DIR.append(Path(configured))
        else:
            _CACHE_DIR.append(Path(tempfile.mkdtemp(prefix="rca-embedding-cache-")))
            atexit.register(shutil.rmtree, _CACHE_DIR[0], ignore_errors=True)
    return _CACHE_DIR[0]


def session_embedding_cache() -> Path:
    """The tests' embedding cache, holding every bundled chunk's vector: read from it, the
    missing ones embedded now (in-process, or by the process holding its fill lock)."""
    from django.test import override_settings

    from rca.corpus import files
    from rca.corpus.embeddings import cached_vectors, chunk_cache, model_name

    with override_settings(RCA_EMBEDDING_CACHE=str(_cache_dir())):
        cache = chunk_cache()
    assert cache is not None
    if cache.model not in _COMPLETE:
        runbooks = files.load_directory(files.bundled_runbook_dir())
        texts = list(dict.fromkeys(c.text for rb in runbooks for c in files.chunk_runbook(rb)))
        vectors, _hits = cached_vectors(texts, cache)
        _VECTORS.update(((model_name(), t), v) for t, v in zip(texts, vectors, strict=True))
        _COMPLETE.add(cache.model)
    return cache.directory


def store_embedded_runbooks() -> None:
    """`load_runbooks()` then `embed_missing_chunks()`, as `make run` prepares the corpus."""
    from django.test import override_settings

    from rca.corpus.chunk_vectors import write_chunk_vectors
    from rca.corpus.embeddings import embed_missing_chunks, model_name
    from rca.corpus.store import load_runbooks
    from rca.models import RunbookChunk

    load_runbooks()
    name = model_name()
    unembedded = RunbookChunk.objects.filter(embedding__isnull=True).only("pk", "text")
    known = [(c.pk, _VECTORS[name, c.text]) for c in unembedded if (name, c.text) in _VECTORS]
    write_chunk_vectors(known, name)
    with override_settings(RCA_EMBEDDING_CACHE=str(_cache_dir())):  # not the user's cache
        if not embed_missing_chunks():
            return  # every vector was known here: nothing new to remember
    # Read back only what was embedded just now (all 1,411 vectors took ~0.7 s a call).
    new_texts = {c.text for c in unembedded if (name, c.text) not in _VECTORS}
    embedded = RunbookChunk.objects.filter(embedding_model=name, text__in=new_texts)
    _VECTORS.update(((name, t), v) for t, v in embedded.values_list("text", "embedding"))
