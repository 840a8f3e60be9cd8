"""Embeddings kept on disk by content, so a fresh database does not re-run the model.

A chunk's vector depends only on the model, how it is encoded (dimension, unit length) and
the exact text. Embedding the bundled corpus costs 40-110 s of CPU on every fresh database
(`make clean && make run`, a second instance, a restore); reading the same vectors back
from here takes well under a second.

One ``.npy`` file per vector, named by the sha256 of its key and sharded by the hash's first
two hex digits. Files rather than one database file because each entry is written once and
never changed: a write is a temporary file renamed over the final name (atomic on POSIX),
so concurrent writers and crashes can leave a stray ``*.tmp`` but never a torn vector.
Every read is checked anyway (shape, dtype, finite, unit length): a bad entry is a miss
and the recomputed vector replaces it. The cache is an accelerator only: if its directory
cannot be written, embedding goes on without it.

Processes that miss the same texts at once (two workers starting on a fresh database, the
test suite's xdist processes) would each run the model for a minute; :meth:`filling` is an
``flock`` per model, so one embeds while the others wait and then read its vectors. The
lock dies with its process, so a crashed holder never blocks anyone.

Bounded: after new vectors are written, entries beyond ``max_entries`` are removed, least
recently used first (a hit refreshes an entry's mtime). A changed model has other keys
(the model string carries a fingerprint of its weights, see
:func:`rca.corpus.embeddings.cache_model_id`), so its old vectors are never served and
age out under the bound.

``RCA_EMBEDDING_CACHE`` chooses the directory (default ``$XDG_CACHE_HOME/rootcause/
embeddings``, else ``~/.cache/rootcause/embeddings``); ``off`` disables it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["EmbeddingCache", "cache_dir"]

log = logging.getLogger(__name__)

#: Bump when the key or file format changes: old entries then simply stop matching.
FORMAT = "rootcause-embedding-v1"
#: How far from unit length a stored (normalised) vector may be before it is distrusted.
_NORM_TOLERANCE = 1e-3
#: Entries kept (~4 KiB of disk each): 20 times the bundled corpus (~1,200 chunks), room for
#: a few models and a team's own runbooks; about 80 MB at most.
MAX_ENTRIES = 25_000


def cache_dir() -> Path | None:
    """The configured cache directory, or None when ``RCA_EMBEDDING_CACHE=off``."""
    from django.conf import settings

    configured = (
        getattr(settings, "RCA_EMBEDDING_CACHE", "") or os.environ.get("RCA_EMBEDDING_CACHE", "")
    ).strip()
    if configured.lower() == "off":
        return None
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "rootcause" / "embeddings"


class EmbeddingCache:
    """Unit-length float32 vectors of one model and dimension, looked up by exact text."""

    def __init__(
        self, directory: Path, model: str, dimension: int, max_entries: int = MAX_ENTRIES
    ) -> None:
        self.directory = directory
        self.model = model
        self.dimension = dimension
        self.max_entries = max_entries
        self._writable = True

    def key(self, text: str) -> str:
        """sha256 of format, model, dimension, normalisation and text (JSON: unambiguous)."""
        material = json.dumps([FORMAT, self.model, self.dimension, "normalized", text])
        return hashlib.sha256(material.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.npy"

    def get(self, text: str) -> list[float] | None:
        """The stored vector of ``text``, or None if absent or not trustworthy."""
        path = self._path(self.key(text))
        try:
            vector = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, EOFError) as exc:  # truncated, garbage, unreadable
            log.debug("ignoring unreadable embedding cache entry %s: %s", path, exc)
            return None
        if not self._valid(vector):
            log.debug("ignoring invalid embedding cache entry %s", path)
            return None
        with contextlib.suppress(OSError):  # recently used: the bound removes others first
            os.utime(path)
        return [float(x) for x in vector]

    def _valid(self, vector: object) -> bool:
        if not isinstance(vector, np.ndarray) or vector.dtype != np.float32:
            return False
        if vector.shape != (self.dimension,) or not np.all(np.isfinite(vector)):
            return False
        return abs(float(np.linalg.norm(vector)) - 1.0) <= _NORM_TOLERANCE

    def get_many(self, texts: Iterable[str]) -> dict[str, list[float]]:
        """The vectors found for ``texts``, by text; misses are left out."""
        found: dict[str, list[float]] = {}
        for text in texts:
            if text not in found and (vector := self.get(text)) is not None:
                found[text] = vector
        return found

    def put(self, text: str, vector: Iterable[float]) -> None:
        """Store ``vector`` for ``text`` atomically; a vector of the wrong shape is refused."""
        array: npt.NDArray[np.float32] = np.asarray(list(vector), dtype=np.float32)
        if not self._valid(array) or not self._writable:
            return
        path = self._path(self.key(text))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem[:16], suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    np.save(out, array, allow_pickle=False)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            self._writable = False  # warn once, then embed without the cache
            log.warning(
                "embedding cache %s is not writable (%s); going on without it", self.directory, exc
            )

    def put_many(self, pairs: Iterable[tuple[str, Iterable[float]]]) -> None:
        for text, vector in pairs:
            self.put(text, vector)

    @contextlib.contextmanager
    def filling(self) -> Iterator[None]:
        """Held while this process embeds misses: one process per model embeds, the others
        wait here and then find its vectors. Without a writable directory, no lock."""
        name = f".fill-{hashlib.sha256(self.model.encode()).hexdigest()[:16]}.lock"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.directory / name, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            fd = -1
        if fd < 0:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def prune(self) -> int:
        """Remove the least recently used entries beyond ``max_entries``, and temporary files
        an hour old (a crashed writer's); how many files went."""
        entries: list[tuple[int, str]] = []
        doomed: list[str] = []
        stale = time.time_ns() - 3600 * 10**9
        try:
            shards = [s.path for s in os.scandir(self.directory) if len(s.name) == 2]
        except OSError:
            return 0
        for shard in shards:
            with contextlib.suppress(OSError):
                for entry in os.scandir(shard):
                    with contextlib.suppress(OSError):
                        mtime = entry.stat(follow_symlinks=False).st_mtime_ns
                        if entry.name.endswith(".npy"):
                            entries.append((mtime, entry.path))
                        elif entry.name.endswith(".tmp") and mtime < stale:
                            doomed.append(entry.path)
        entries.sort()
        doomed += [path for _, path in entries[: max(0, len(entries) - self.max_entries)]]
        removed = 0
        for path in doomed:
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed += 1
        return removed
