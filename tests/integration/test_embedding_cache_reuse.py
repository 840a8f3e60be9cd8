"""A fresh database whose corpus was embedded before gets its vectors from the embedding
cache: the model is not run, and the vectors are the very ones the model gave."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from rca.corpus.embeddings import embed_missing_chunks, model_uses
from rca.corpus.store import load_runbooks
from rca.models import Runbook, RunbookChunk
from tests.support.corpus import session_embedding_cache, store_embedded_runbooks

pytestmark = pytest.mark.django_db


def vectors() -> dict[str, list[float]]:
    rows = RunbookChunk.objects.values_list("text", "embedding")
    return {text: np.asarray(vector).tolist() for text, vector in rows}


def fresh_corpus() -> None:
    """What a new database holds after `runbooks load`: every chunk, none embedded."""
    Runbook.objects.all().delete()
    load_runbooks()
    assert not RunbookChunk.objects.filter(embedding__isnull=False).exists()


def test_a_fresh_database_gets_the_whole_corpus_from_the_cache_without_the_model(settings, caplog):
    store_embedded_runbooks()  # the model's vectors (computed once per test run)
    before = vectors()
    settings.RCA_EMBEDDING_CACHE = str(session_embedding_cache())
    fresh_corpus()
    uses = model_uses()
    with caplog.at_level(logging.INFO, logger="rca.corpus.embeddings"):
        assert embed_missing_chunks() == len(before)
    assert model_uses() == uses
    assert vectors() == before
    assert f"({len(before)} from the cache)" in caplog.text


def test_chunks_the_model_embeds_are_cached_for_the_next_database(settings, tmp_path, caplog):
    store_embedded_runbooks()
    settings.RCA_EMBEDDING_CACHE = str(tmp_path / "cache")
    some = list(RunbookChunk.objects.order_by("pk")[:3])
    RunbookChunk.objects.filter(pk__in=[c.pk for c in some]).update(embedding=None)
    uses = model_uses()
    assert embed_missing_chunks() == 3  # an empty cache: the model runs, once
    assert model_uses() == uses + 1
    stored = vectors()
    first = {c.text: stored[c.text] for c in some}

    RunbookChunk.objects.filter(pk__in=[c.pk for c in some]).update(embedding=None)
    with caplog.at_level(logging.INFO, logger="rca.corpus.embeddings"):
        assert embed_missing_chunks() == 3
    assert model_uses() == uses + 1  # all three from the cache
    assert {c.text: vectors()[c.text] for c in some} == first
    assert "(3 from the cache)" in caplog.text


def test_with_the_cache_off_the_model_embeds(settings):
    store_embedded_runbooks()
    settings.RCA_EMBEDDING_CACHE = "off"
    RunbookChunk.objects.filter(pk=RunbookChunk.objects.order_by("pk")[0].pk).update(embedding=None)
    uses = model_uses()
    assert embed_missing_chunks() == 1
    assert model_uses() == uses + 1
