"""A running analysis keeps its claim; a claim nobody renews is taken back by the sweeper.

On the database, no worker: the claim and the renewal thread are the pipeline's own
(`rca/queue/claim.py`, `rca/queue/lease.py`); publishing is recorded instead of sent.
The lease is short (seconds) so the test sees renewals and a lapse quickly.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from ingest.models import Incident, Project
from ingest.store import store_incidents
from rca.queue import claim, lease, sweeper
from tests.support.factories import shape_error
from tests.support.processes import wait_for

# The renewal thread has its own connection: it must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def published(monkeypatch) -> list[int]:
    """What the sweeper re-sends (intake's first publish is dropped: no broker here)."""
    from rca.queue import intake

    sent: list[int] = []
    monkeypatch.setattr(intake, "publish_analyses_on_commit", lambda ids, queue=None: None)
    monkeypatch.setattr(
        sweeper, "publish_analysis_on_commit", lambda pk, queue=None: sent.append(pk)
    )
    return sent


@pytest.fixture
def incident(published, settings) -> Incident:
    settings.RCA_ANALYSIS_LEASE = 1.5
    project = Project.objects.create(name="Leases", slug="leases")
    [stored] = store_incidents(project, [shape_error(batch=4)])
    return stored.incident


def lease_until(incident: Incident) -> datetime:
    until = Incident.objects.values_list("analysis_lease_until", flat=True).get(pk=incident.pk)
    assert until is not None
    return until


def state(incident: Incident) -> str:
    return Incident.objects.values_list("analysis_status", flat=True).get(pk=incident.pk)


def test_a_long_analysis_renews_its_lease_and_the_sweeper_leaves_it_alone(
    incident, published
) -> None:
    token = claim.claim(incident.pk)
    assert token is not None
    first = lease_until(incident)
    with lease.Renewal(incident.pk, token) as renewal:
        # Four renewals at a third of the lease each: the claim's own lease has lapsed.
        wait_for(lambda: renewal.renewals >= 4, timeout=30, interval=0.05)
        assert timezone.now() > first
        assert lease_until(incident) > first
        assert sweeper.sweep() == []
        assert state(incident) == "analyzing"
    assert published == []

    # The worker is gone (nothing renews): once the lease lapses the sweeper re-queues it,
    # and the attempt the lost worker made still counts.
    wait_for(lambda: timezone.now() > lease_until(incident), timeout=30, interval=0.1)
    assert sweeper.sweep() == [incident.pk]
    assert published == [incident.pk]
    swept = Incident.objects.get(pk=incident.pk)
    assert (swept.analysis_status, swept.analysis_attempts) == ("pending", 1)
    assert swept.analysis_error == claim.WORKER_LOST


def test_a_worker_whose_claim_was_taken_back_never_extends_the_next_claim(incident) -> None:
    stale = claim.claim(incident.pk)
    assert stale is not None
    assert sweeper.sweep(stuck_after=timedelta(0)) == [incident.pk]
    fresh = claim.claim(incident.pk)
    assert fresh is not None
    held = lease_until(incident)

    assert not lease.renew(incident.pk, stale)  # the old worker woke up: not its claim
    assert lease_until(incident) == held
    assert lease.renew(incident.pk, fresh)
    assert Incident.objects.get(pk=incident.pk).analysis_attempts == 2
