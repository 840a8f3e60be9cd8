"""A fresh install gets the bundled corpus's vectors from the file shipped with it: the
model does not run over ~1,500 chunks, and the vectors are the ones the model gives."""

from __future__ import annotations

import numpy as np
import pytest

from rca.corpus import files
from rca.corpus.embeddings import cache_model_id, embed, embed_missing_chunks, model_uses
from rca.corpus.shipped_vectors import SHIPPED_PATH, lookup
from rca.corpus.store import load_runbooks
from rca.models import EMBEDDING_DIM, Runbook, RunbookChunk

pytestmark = pytest.mark.django_db


def bundled_texts() -> list[str]:
    runbooks = files.load_directory(files.bundled_runbook_dir())
    return list(dict.fromkeys(c.text for rb in runbooks for c in files.chunk_runbook(rb)))


def test_the_shipped_file_covers_the_bundled_corpus() -> None:
    """Editing bundled runbooks without `manage.py runbooks ship-vectors` makes every fresh
    install embed the new chunks itself; a few are fine, most are a stale file."""
    texts = bundled_texts()
    shipped = lookup(texts, cache_model_id(), EMBEDDING_DIM)
    missing = len(texts) - len(shipped)
    assert missing <= 0.1 * len(texts), (
        f"{missing} of {len(texts)} bundled chunks have no shipped vector "
        f"({SHIPPED_PATH}): run `manage.py runbooks ship-vectors`"
    )


def test_a_fresh_database_is_embedded_without_the_model(settings) -> None:
    settings.RCA_EMBEDDING_CACHE = "off"  # nothing from an earlier run on this machine
    Runbook.objects.all().delete()  # what a new database holds: no chunk embedded
    load_runbooks()
    texts = set(RunbookChunk.objects.values_list("text", flat=True))
    shipped = lookup(texts, cache_model_id(), EMBEDDING_DIM)
    # chunks edited since the file was written are the other test's concern
    RunbookChunk.objects.exclude(text__in=shipped).delete()
    uses = model_uses()
    assert embed_missing_chunks() == len(shipped) > 1000
    assert model_uses() == uses  # the model never ran
    stored = dict(RunbookChunk.objects.values_list("text", "embedding"))
    sample = sorted(shipped)[:: len(shipped) // 8]
    for text, vector in zip(sample, embed(sample), strict=True):  # the model's own vectors
        assert np.allclose(stored[text], vector, atol=1e-5)


def test_shipped_vectors_are_not_used_when_switched_off(settings) -> None:
    settings.RCA_SHIPPED_VECTORS = "off"
    assert lookup(bundled_texts()[:5], cache_model_id(), EMBEDDING_DIM) == {}
