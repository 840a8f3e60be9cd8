"""Writing the shipped vectors of the bundled runbooks (``manage.py runbooks ship-vectors``).

Apart from :mod:`rca.corpus.shipped_vectors`, which :mod:`rca.corpus.embeddings` reads:
writing needs the embeddings (and maybe the model), reading must not.
"""

from __future__ import annotations

from pathlib import Path

from rca.corpus.shipped_vectors import SHIPPED_PATH, write

__all__ = ["ship_bundled"]


def ship_bundled(path: Path = SHIPPED_PATH) -> int:
    """Write the vectors of every bundled chunk text, as the configured model makes them:
    from the cache or the file itself where known, the rest by the model. Texts no longer
    in the corpus are dropped."""
    from rca.corpus import files
    from rca.corpus.embeddings import cache_model_id, cached_vectors, chunk_cache

    runbooks = files.load_directory(files.bundled_runbook_dir())
    texts = list(dict.fromkeys(c.text for rb in runbooks for c in files.chunk_runbook(rb)))
    vectors, _known = cached_vectors(texts, chunk_cache())
    return write(zip(texts, vectors, strict=True), cache_model_id(), path)
