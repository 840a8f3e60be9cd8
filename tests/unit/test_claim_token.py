"""A worker whose claim was taken back cannot overwrite the newer claim's outcome.

Two real claims on one incident, as happens when a worker freezes past its lease: the
sweeper hands the incident back, a second worker claims it, then the first wakes up and
tries to finish or fail. Only the claim that holds the token may end the analysis.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from ingest.models import Incident, Project
from ingest.store import store_incidents
from rca.queue import claim, sweeper
from tests.support.factories import shape_error

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def incident(monkeypatch) -> Incident:
    """A stored incident; publishing is dropped (no broker here, and none is needed)."""
    from rca.queue import intake

    monkeypatch.setattr(intake, "publish_analyses_on_commit", lambda ids, queue=None: None)
    monkeypatch.setattr(sweeper, "publish_analysis_on_commit", lambda pk, queue=None: None)
    project = Project.objects.create(name="Claims", slug="claims")
    [stored] = store_incidents(project, [shape_error(batch=4)])
    return stored.incident


def two_claims(incident: Incident):
    stale = claim.claim(incident.pk)
    assert stale is not None
    assert sweeper.sweep(stuck_after=timedelta(0)) == [incident.pk]  # its lease "lapsed"
    fresh = claim.claim(incident.pk)
    assert fresh is not None and fresh != stale
    return stale, fresh


def row(incident: Incident) -> tuple[str, str]:
    return Incident.objects.values_list("analysis_status", "analysis_error").get(pk=incident.pk)


def test_a_stale_worker_finishing_leaves_the_newer_claim_running(incident) -> None:
    stale, fresh = two_claims(incident)

    assert claim.finish(incident.pk, Incident.Analysis.DONE, stale) is False
    assert row(incident)[0] == "analyzing"  # the newer claim still holds it

    assert claim.finish(incident.pk, Incident.Analysis.DONE, fresh) is True
    assert row(incident) == ("done", "")


def test_a_stale_worker_failing_neither_fails_nor_requeues_the_newer_claim(incident) -> None:
    stale, fresh = two_claims(incident)

    assert claim.fail(incident.pk, "RuntimeError: stale worker", stale) is None
    status, error = row(incident)
    assert status == "analyzing" and "stale worker" not in error

    failure = claim.fail(incident.pk, "RuntimeError: fresh worker", fresh)
    assert failure is not None and failure.attempts == 2
    assert row(incident)[1] == "RuntimeError: fresh worker"


def test_the_newer_claim_finished_cannot_be_flipped_by_the_stale_one(incident) -> None:
    stale, fresh = two_claims(incident)
    assert claim.finish(incident.pk, Incident.Analysis.DONE, fresh)

    assert claim.fail(incident.pk, "RuntimeError: late", stale) is None
    assert claim.finish(incident.pk, Incident.Analysis.FAILED, stale) is False
    assert row(incident) == ("done", "")
