"""A fresh database whose corpus was embedded before gets its vectors from the embedding
cache: the model is not run, and the vectors are the very ones the model gave."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from rca.corpus.embeddings import embed, embed_missing_chunks, model_path, model_uses
from rca.corpus.files import bundled_runbook_dir
from rca.corpus.store import load_runbooks
from rca.models import Runbook, RunbookChunk
from tests.support.corpus import store_embedded_runbooks

pytestmark = pytest.mark.django_db


def cache_only(settings, cache: str) -> None:
    """These tests are about the cache: the vectors shipped with the bundled runbooks
    (tests/integration/test_shipped_vectors.py) would answer before the model runs. Set
    after `store_embedded_runbooks()`, which may read them."""
    settings.RCA_EMBEDDING_CACHE = cache
    settings.RCA_SHIPPED_VECTORS = "off"


def vectors() -> dict[str, list[float]]:
    rows = RunbookChunk.objects.values_list("text", "embedding")
    return {text: np.asarray(vector).tolist() for text, vector in rows}


def test_a_fresh_database_gets_its_corpus_from_the_cache_without_the_model(
    settings, tmp_path, caplog
):
    cache_only(settings, str(tmp_path / "cache"))
    load_runbooks(one_runbook(tmp_path / "runbooks").parent)
    count = embed_missing_chunks()  # the model's vectors, now cached
    before = vectors()
    Runbook.objects.all().delete()  # a new database
    load_runbooks(tmp_path / "runbooks")
    uses = model_uses()
    with caplog.at_level(logging.INFO, logger="rca.corpus.embeddings"):
        assert embed_missing_chunks() == count == len(before) > 2
    assert model_uses() == uses
    assert vectors() == before
    assert f"({count} from the cache)" in caplog.text


def test_chunks_the_model_embeds_are_cached_for_the_next_database(settings, tmp_path, caplog):
    store_embedded_runbooks()
    cache_only(settings, str(tmp_path / "cache"))
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
    cache_only(settings, "off")
    RunbookChunk.objects.filter(pk=RunbookChunk.objects.order_by("pk")[0].pk).update(embedding=None)
    uses = model_uses()
    assert embed_missing_chunks() == 1
    assert model_uses() == uses + 1


def one_runbook(directory: Path) -> Path:
    """A runbook directory holding a copy of one bundled runbook, and that copy's path; the
    database starts without runbooks (an earlier module may have stored the corpus: its
    chunks would already be embedded)."""
    Runbook.objects.all().delete()
    directory.mkdir()
    page = directory / "amp-loss-scale-overflow.md"
    shutil.copy(bundled_runbook_dir() / page.name, page)
    return page


def test_an_edited_runbook_embeds_only_its_changed_chunk_again(settings, tmp_path, caplog):
    """Re-importing a runbook with one section edited: the unchanged chunks come from the
    cache, the edited one is embedded by the model, and its vector is the new text's."""
    cache_only(settings, str(tmp_path / "cache"))
    page = one_runbook(tmp_path / "runbooks")
    load_runbooks(page.parent)
    uses = model_uses()
    count = embed_missing_chunks()
    assert count == RunbookChunk.objects.count() > 2 and model_uses() == uses + 1
    before = vectors()

    added = "- Loss scale reaches 1 and every step is skipped.\n"
    page.write_text(page.read_text().replace("## Symptoms\n\n", f"## Symptoms\n\n{added}", 1))
    assert load_runbooks(page.parent).updated == ["amp-loss-scale-overflow"]
    with caplog.at_level(logging.INFO, logger="rca.corpus.embeddings"):
        assert embed_missing_chunks() == count
    assert model_uses() == uses + 2  # the model ran again, for the edited chunk only
    assert f"({count - 1} from the cache)" in caplog.text
    after = vectors()
    [edited], [old] = set(after) - set(before), set(before) - set(after)
    assert added in edited and edited.replace(added, "") == old
    assert {t: v for t, v in after.items() if t != edited} == {
        t: v for t, v in before.items() if t != old
    }
    assert np.allclose(after[edited], embed([edited])[0], atol=1e-5)
    assert not np.allclose(after[edited], before[old], atol=1e-3)


def test_another_model_is_not_answered_from_the_cache(settings, tmp_path, caplog):
    """Vectors cached for one model are not served to another, even one whose vectors are
    the same (the bundled weights under another directory name), and the first model's
    stay cached for it."""
    cache_only(settings, str(tmp_path / "cache"))
    load_runbooks(one_runbook(tmp_path / "runbooks").parent)
    count = embed_missing_chunks()  # cached for the bundled model
    bundled = vectors()
    other = tmp_path / "same-weights-other-name"
    other.mkdir()
    for entry in Path(model_path()).iterdir():
        (other / entry.name).symlink_to(entry)
    settings.RCA_EMBEDDING_MODEL = str(other)
    uses = model_uses()
    with caplog.at_level(logging.INFO, logger="rca.corpus.embeddings"):
        assert embed_missing_chunks() == count  # every chunk: stored for another model
    assert model_uses() == uses + 1
    assert "(0 from the cache)" in caplog.text
    assert set(RunbookChunk.objects.values_list("embedding_model", flat=True)) == {str(other)}
    for text, vector in vectors().items():
        assert np.allclose(vector, bundled[text], atol=1e-5)  # same weights, the model's own

    settings.RCA_EMBEDDING_MODEL = ""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="rca.corpus.embeddings"):
        assert embed_missing_chunks() == count
    assert model_uses() == uses + 1 and f"({count} from the cache)" in caplog.text
    assert vectors() == bundled
