"""A runbook a release-notes row joins is part of what an analysis says it consulted.

The worker adds the runbooks a matching release-notes row reaches past retrieval to the
evidence (:func:`rca.suggestion.evidence.with_documented_runbooks`). The analysis then
lists them among its runbooks (``Analysis.retrieved``, what the UI and the API show),
marked as joined by the row, and they are part of its cache key: an analysis whose joined
runbooks differ never answers from another's cached suggestion. Through the real pipeline
(:func:`rca.pipeline.analyse`) on the stored, embedded corpus; publishing is dropped (no
broker is needed to call the analysis directly).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.urls import reverse

from ingest.models import Incident, Project
from ingest.store import store_incidents
from rca.corpus.files import bundled_runbook_dir
from rca.models import Analysis
from rca.pipeline import analyse
from rca.retrieval import index as corpus_index
from rca.suggestion.evidence import JOINED_BY_ROW
from rca.suggestion.providers.documented_steps import DOCUMENTED_PLACEHOLDER
from tests.support.corpus import store_embedded_runbooks
from tests.support.ui import member

pytestmark = pytest.mark.django_db(transaction=True)

_VERSION = "version-api-changed-signature"
_NUMPY = "version-numpy2-abi"  # another runbook with a row step, joined beside it
_MESSAGE = "'Sequential' object has no attribute 'predict_classes'"


def _removed_api(group: str) -> dict:
    """Keras code calling a method TensorFlow 2.6 removed; the client groups it as ``group``
    (Sentry's explicit fingerprint): another issue, the very same signals."""
    return {
        "fingerprint": ["{{ default }}", group],
        "service": "classifier",
        "environment": "prod",
        "error_type": "AttributeError",
        "message": _MESSAGE,
        "stacktrace": (
            "Traceback (most recent call last):\n"
            '  File "/srv/classifier/serve.py", line 31, in predict\n'
            "    labels = model.predict_classes(batch)\n"
            f"AttributeError: {_MESSAGE}"
        ),
    }


@pytest.fixture
def project(monkeypatch) -> Project:
    from rca.queue import intake

    monkeypatch.setattr(intake, "publish_analyses_on_commit", lambda ids, queue=None: None)
    # An index kept from an earlier test (the same corpus version) has that test's chunk ids.
    monkeypatch.setattr(corpus_index, "_current", None)
    store_embedded_runbooks()
    return Project.objects.create(name="Documented", slug="documented")


def _analysed(project: Project, group: str) -> Analysis:
    [stored] = store_incidents(project, [_removed_api(group)])
    analysis = analyse(stored.incident.pk)
    assert analysis is not None and analysis.status == "done", analysis and analysis.error
    assert Incident.objects.get(pk=stored.incident.pk).analysis_status == "done"
    return analysis


def _joined(analysis: Analysis) -> list[str]:
    return [r["slug"] for r in analysis.retrieved if r.get("joined") == JOINED_BY_ROW]


def test_a_joined_runbook_is_listed_among_the_runbooks_consulted(project, client) -> None:
    analysis = _analysed(project, "first")
    runbooks = [r for r in analysis.retrieved if r["kind"] == "runbook"]
    ranked = [r["slug"] for r in runbooks if not r.get("joined")]
    joined = [r for r in runbooks if r["joined"] == JOINED_BY_ROW]
    assert _VERSION in [r["slug"] for r in joined] and _VERSION not in ranked, runbooks
    assert all(r["chunk_id"] is None and r["fused"] == 0.0 for r in joined)
    assert analysis.suggestion.runbook_slug == _VERSION
    assert "argmax" in analysis.suggestion.action
    client.force_login(member(project, "alice"))
    page = client.get(reverse("issue", args=[analysis.issue_id])).content.decode()
    assert f"joined by a {JOINED_BY_ROW}, not ranked" in page


def _edited(tmp_path: Path, settings, old: str, new: str) -> None:
    """The user edits the joined runbook ``_NUMPY`` and reloads the corpus (`runbooks
    import`): its step's words, never a chunk retrieval ranks here."""
    page = tmp_path / f"{_NUMPY}.md"
    if not page.exists():
        shutil.copytree(bundled_runbook_dir(), tmp_path, dirs_exist_ok=True)
    assert old in page.read_text()
    page.write_text(page.read_text().replace(old, new))
    settings.RCA_BUNDLED_RUNBOOKS, settings.RCA_RUNBOOK_DIR = False, str(tmp_path)
    store_embedded_runbooks()


def _ranked(analysis: Analysis) -> list[tuple[str, int | None]]:
    return [(r["kind"], r["chunk_id"]) for r in analysis.retrieved if not r.get("joined")]


def test_a_cached_suggestion_is_not_reused_when_the_joined_runbooks_differ(
    project, tmp_path: Path, settings
) -> None:
    first = _analysed(project, "first")  # each analysis another issue, the same signals
    assert _NUMPY in _joined(first)

    # Its row step reworded: the same runbooks join, with other steps.
    _edited(tmp_path, settings, "is newer than the code", "is later than the code")
    second = _analysed(project, "second")
    assert _ranked(second) == _ranked(first) and _joined(second) == _joined(first)
    assert not any("cache_hit_of_analysis" in a for a in second.attempts), second.attempts

    # Its step names no row any more: the row no longer joins it.
    _edited(tmp_path, settings, f" ({DOCUMENTED_PLACEHOLDER})", "")
    third = _analysed(project, "third")
    assert _ranked(third) == _ranked(first)
    assert _joined(third) == [slug for slug in _joined(first) if slug != _NUMPY]
    assert not any("cache_hit_of_analysis" in a for a in third.attempts), third.attempts
    assert len({first.cache_key, second.cache_key, third.cache_key}) == 3

    fourth = _analysed(project, "fourth")  # the same joined runbooks again: the cache answers
    assert [a.get("cache_hit_of_analysis") for a in fourth.attempts] == [third.pk]


def test_an_edit_of_a_joined_runbooks_conditions_alone_is_no_cache_hit(
    project, tmp_path: Path, settings
) -> None:
    """Its steps' words the same, one step's `Applies:` condition changed: which step
    applies may differ, so the cached suggestion is not reused."""
    first = _analysed(project, "first")
    assert _NUMPY in _joined(first)
    _edited(
        tmp_path,
        settings,
        "Applies: {unless: [numpy-older-than-build]}\n3.",
        "Applies: {unless: [numpy-older-than-build, version-above-supported]}\n3.",
    )
    second = _analysed(project, "second")
    assert _ranked(second) == _ranked(first) and _joined(second) == _joined(first)
    assert [r["text"] for r in second.retrieved] == [r["text"] for r in first.retrieved]
    assert not any("cache_hit_of_analysis" in a for a in second.attempts), second.attempts
    assert second.cache_key != first.cache_key
