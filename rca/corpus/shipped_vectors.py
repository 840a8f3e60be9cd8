"""Vectors of the bundled runbooks, shipped with them, so a fresh install runs no model.

Embedding the bundled corpus (~1,500 chunks) costs 40-270 s of CPU on the 2-core box, on
every fresh machine: the first `make run`, a new container, each CI clone. The vectors are
a pure function of the model's weights, the libraries that run it and a chunk's text, so
they are computed once (``manage.py runbooks ship-vectors``, :mod:`rca.corpus.shipping`)
and stored beside the code in ``shipped-vectors.npz``: the model id they were made with,
the sha256 of each text, and the float32 vectors (~2.2 MB compressed).

They are used only when the model id matches :func:`rca.corpus.embeddings.cache_model_id`
exactly (the weights' digest and the installed sentence-transformers, transformers,
tokenizers and torch versions), so another model or library release never gets them; a
chunk whose text changed since they were made has another digest and is embedded as
before. Every vector is checked as the on-disk cache checks its own (shape, finite, unit
length). ``RCA_SHIPPED_VECTORS=off`` ignores the file.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["SHIPPED_PATH", "lookup", "write"]

log = logging.getLogger(__name__)

SHIPPED_PATH = Path(__file__).with_name("shipped-vectors.npz")
_NORM_TOLERANCE = 1e-3


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _enabled() -> bool:
    from django.conf import settings

    value = getattr(settings, "RCA_SHIPPED_VECTORS", "") or os.environ.get(
        "RCA_SHIPPED_VECTORS", ""
    )
    return str(value).strip().lower() != "off"


@lru_cache(maxsize=4)
def _table(path: str, mtime_ns: int) -> tuple[str, dict[bytes, npt.NDArray[np.float32]]]:
    """The file's model id and its vectors by text digest (read once per file version)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            model = str(data["model"])
            keys, vectors = data["keys"], data["vectors"]
    except (OSError, ValueError, KeyError) as exc:
        log.warning("ignoring shipped vectors %s: %s", path, exc)
        return "", {}
    if (
        vectors.dtype != np.float32
        or vectors.ndim != 2
        or keys.dtype != np.uint8
        or keys.shape != (len(vectors), 32)
    ):
        log.warning("ignoring shipped vectors %s: unexpected layout", path)
        return "", {}
    norms = np.linalg.norm(vectors, axis=1)
    good = np.isfinite(vectors).all(axis=1) & (np.abs(norms - 1.0) <= _NORM_TOLERANCE)
    return model, {k.tobytes(): v for k, v, ok in zip(keys, vectors, good, strict=True) if ok}


def lookup(
    texts: Iterable[str], model: str, dimension: int, path: Path = SHIPPED_PATH
) -> dict[str, list[float]]:
    """Shipped vectors of ``texts`` made by exactly ``model`` with ``dimension``; misses left
    out (all of them when the file is absent, off, or from another model)."""
    if not _enabled():
        return {}
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return {}
    shipped_model, table = _table(str(path), mtime)
    if shipped_model != model or not table:
        return {}
    found: dict[str, list[float]] = {}
    for text in texts:
        vector = table.get(_digest(text))
        if vector is not None and vector.shape == (dimension,):
            found[text] = [float(x) for x in vector]
    return found


def write(
    pairs: Iterable[tuple[str, Iterable[float]]], model: str, path: Path = SHIPPED_PATH
) -> int:
    """Store ``(text, vector)`` pairs made by ``model``, sorted by digest (a stable file for
    the same corpus); how many were written."""
    rows = sorted(
        ((_digest(text), np.asarray(list(vector), dtype=np.float32)) for text, vector in pairs),
        key=lambda row: row[0],
    )
    # raw digests as a (n, 32) uint8 array: numpy's fixed-width bytes ("S32") would drop a
    # digest's trailing zero bytes
    keys = np.frombuffer(b"".join(key for key, _ in rows), dtype=np.uint8).reshape(-1, 32)
    vectors = np.stack([vector for _, vector in rows]) if rows else np.zeros((0, 0), np.float32)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, model=np.array(model), keys=keys, vectors=vectors)
    os.replace(tmp, path)
    _table.cache_clear()
    return len(rows)
