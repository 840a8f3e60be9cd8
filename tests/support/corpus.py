"""The bundled runbooks, stored and embedded for a test; each chunk text embedded once a run.

Transactional tests flush every table after each test, so each test that needs the
corpus stores it again. Storing is quick; embedding every chunk with the real model took
~20 s per test on the 2-core box, most of the integration suite's setup time. A vector
depends only on the model and the chunk's text, so the first test of the run computes
them and later tests write the same vectors back; a chunk whose text is new to the run
(a test's own runbook, an edited one) is still embedded by the model.
"""

from __future__ import annotations

from typing import Any

#: (model name, chunk text) -> embedding, for this pytest process.
_VECTORS: dict[tuple[str, str], Any] = {}


def store_embedded_runbooks() -> None:
    """`load_runbooks()` then `embed_missing_chunks()`, as `make run` prepares the corpus."""
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
    embed_missing_chunks()
    embedded = RunbookChunk.objects.filter(embedding_model=name).values_list("text", "embedding")
    _VECTORS.update(((name, text), vector) for text, vector in embedded)
