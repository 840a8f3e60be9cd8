"""`manage.py retention`: old incidents go; recent ones, issues and decisions stay."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from ingest.models import Incident, Issue
from rca.models import Decision
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import analysed, member, store

pytestmark = pytest.mark.django_db


def _aged(incident: Incident, days: int, status: str = Incident.Analysis.DONE) -> Incident:
    Incident.objects.filter(pk=incident.pk).update(
        received_at=timezone.now() - timedelta(days=days), analysis_status=status
    )
    return incident


def _retention(*args: str) -> str:
    out = StringIO()
    call_command("retention", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def project():
    return project_with_key("ml-platform").project


def test_old_incidents_go_recent_stay_issue_keeps_its_counts(project):
    old = [_aged(store(project, shape_error(batch=4)), days=40) for _ in range(3)]
    recent = store(project, shape_error(batch=4))
    issue_before = Issue.objects.get(pk=recent.issue_id)

    out = _retention("--days", "30", "--batch", "2")  # two batches

    assert "deleted 3 incidents" in out
    assert not Incident.objects.filter(pk__in=[i.pk for i in old]).exists()
    assert Incident.objects.filter(pk=recent.pk).exists()
    issue = Issue.objects.get(pk=recent.issue_id)
    assert issue.occurrence_count == issue_before.occurrence_count == 4
    assert (issue.first_seen, issue.last_seen) == (issue_before.first_seen, issue_before.last_seen)


def test_dry_run_reports_the_count_and_deletes_nothing(project):
    for _ in range(2):
        _aged(store(project, shape_error(batch=4)), days=40)

    out = _retention("--days", "30", "--dry-run")

    assert "would delete 2 incidents" in out
    assert Incident.objects.count() == 2


def test_decided_suggestion_and_its_incident_stay_and_the_issue_page_renders(client, project):
    incident = _aged(store(project, shape_error(batch=4)), days=40)
    suggestion = analysed(incident)
    user = member(project, "alice")
    Decision.objects.create(suggestion=suggestion, user=user, verdict="accepted", note="fixed")
    _aged(incident, days=40)
    orphan = _aged(store(project, shape_error(batch=4)), days=40)  # same issue, no analysis

    out = _retention("--days", "30")

    assert "deleted 1 incidents" in out and "kept 1 referenced" in out
    assert not Incident.objects.filter(pk=orphan.pk).exists()
    assert Incident.objects.filter(pk=incident.pk).exists()
    assert Decision.objects.filter(suggestion=suggestion).exists()
    client.force_login(user)
    response = client.get(reverse("issue", args=[incident.issue_id]))
    assert response.status_code == 200
    assert suggestion.action in response.content.decode()


def test_incidents_waiting_for_analysis_are_kept(project):
    waiting = _aged(store(project, shape_error(batch=4)), 40, Incident.Analysis.PENDING)
    running = _aged(store(project, shape_error(batch=4)), 40, Incident.Analysis.ANALYZING)

    out = _retention("--days", "30")

    assert "deleted 0 incidents" in out and "2 still waiting" in out
    assert Incident.objects.filter(pk__in=[waiting.pk, running.pk]).count() == 2


def test_an_issue_whose_incidents_all_went_still_renders(client, project):
    incident = _aged(store(project, shape_error(batch=4)), days=40)
    _retention("--days", "30")
    client.force_login(member(project, "bob"))
    response = client.get(reverse("issue", args=[incident.issue_id]))
    assert response.status_code == 200
    assert client.get("/").status_code == 200
