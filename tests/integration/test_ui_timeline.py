"""The timeline: filters narrow it (live, shareable URLs), and its cost does not grow with data."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ingest.models import Incident, Issue
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import analysed, member, store

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(client):
    project = project_with_key("ml-platform").project
    client.force_login(member(project, "alice"))
    return project


def oom(service: str) -> dict:
    return {
        "service": service,
        "error_type": "torch.OutOfMemoryError",
        "message": "CUDA out of memory. Tried to allocate 2.00 GiB",
        "inference_context": {"model_id": "llama-8b"},
    }


def test_filters_narrow_the_list_and_htmx_gets_only_the_results(client, project):
    ranker = store(project, shape_error(batch=4))
    analysed(ranker)
    store(project, oom("chat"))
    page = client.get("/").content.decode()
    assert "ranker" in page and "llama-8b" in page
    assert "Set the head's in_features to 256" in page  # the current suggestion's action
    assert '<option value="chat">chat</option>' in page

    fragment = client.get("/?service=chat", HTTP_HX_REQUEST="true")
    html = fragment.content.decode()
    assert html.lstrip().startswith('<div id="timeline-results"')
    assert "torch.OutOfMemoryError" in html and "RuntimeError" not in html
    assert "<svg" in html  # the chart follows the filters
    assert html.count('<rect x="') == 1 and "&lt;" not in html  # its marks, drawn, not escaped

    searched = client.get("/?q=mat1", HTTP_HX_REQUEST="true").content.decode()
    assert "RuntimeError" in searched and "torch.OutOfMemoryError" not in searched
    assert "No issues match" in client.get("/?status=resolved").content.decode()


def test_history_restore_gets_the_whole_page(client, project):
    response = client.get(
        "/?service=chat", HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in response.content.decode()


def test_pages_link_with_the_filters_kept(client, project):
    now = timezone.now()
    Issue.objects.bulk_create(
        Issue(
            project=project,
            fingerprint=f"f{i}",
            title=f"bug {i}",
            service="svc",
            first_seen=now,
            last_seen=now - timedelta(minutes=i),
            occurrence_count=1,
        )
        for i in range(60)
    )
    html = client.get("/?service=svc").content.decode()
    assert "page 1 of 2" in html and 'href="?service=svc&amp;page=2"' in html
    assert "bug 59" in client.get("/?service=svc&page=2").content.decode()


def test_timeline_of_10000_incidents_in_500_issues_costs_a_fixed_number_of_queries(
    client, project, django_assert_num_queries
):
    now = timezone.now()
    issues = Issue.objects.bulk_create(
        Issue(
            project=project,
            fingerprint=f"fp{i}",
            title=f"failure {i}",
            error_type="RuntimeError",
            culprit=f"serve.py in f{i}",
            service=f"svc-{i % 7}",
            model_id=f"m-{i % 5}",
            first_seen=now - timedelta(days=2),
            last_seen=now - timedelta(minutes=i),
            occurrence_count=20,
        )
        for i in range(500)
    )
    Incident.objects.bulk_create(
        (
            Incident(
                project=project,
                issue=issue,
                event_id=f"e{issue.pk}-{n}",
                service=issue.service,
                occurred_at=now,
                error_type="RuntimeError",
                message="boom",
                fingerprint=issue.fingerprint,
                model_id=issue.model_id,
            )
            for issue in issues
            for n in range(20)
        ),
        batch_size=2000,
    )
    for issue in issues[:40]:
        analysed(Incident.objects.filter(issue=issue).first())
    # session, user, chart, count, page, backlog, last heartbeat, SLO breaches; the full
    # page adds the filter menus (projects + services, models, error types)
    with django_assert_num_queries(13):  # +1: the inbox rows not stored yet
        response = client.get("/")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count("<tr>") == 51 and "500 issues" in html
    assert html.count("Set the head's in_features") == 40  # one subquery, no N+1
    with django_assert_num_queries(9):  # the fragment: no filter menus
        client.get("/?service=svc-3&page=2", HTTP_HX_REQUEST="true")


def test_the_backlog_of_the_users_projects_is_shown_while_there_is_one(client, project):
    assert "waiting for analysis" not in client.get("/").content.decode()  # nothing stored

    other = project_with_key("search").project  # alice is no member: its backlog is not hers
    for batch in (4, 8, 16):
        store(other, shape_error(batch=batch))
    assert "waiting for analysis" not in client.get("/").content.decode()

    first = store(project, shape_error(batch=4))
    store(project, oom("chat"))
    repeat = store(project, shape_error(batch=8))
    Incident.objects.filter(pk=repeat.pk).update(analysis_joined=True)
    queued = timezone.now() - timedelta(minutes=5)
    Incident.objects.filter(pk=first.pk).update(analysis_updated_at=queued)
    html = client.get("/").content.decode()
    assert "3 incidents waiting for analysis" in html
    assert "1 of them repeat joining an analysis already queued" in html
    assert "oldest <time" in html and "5\xa0minutes</time>" in html
    # The htmx fragment (every filter change) carries it too.
    assert "3 incidents waiting" in client.get("/?service=chat", HTTP_HX_REQUEST="true").text

    Incident.objects.filter(project=project).update(analysis_status=Incident.Analysis.DONE)
    assert "waiting for analysis" not in client.get("/").content.decode()


def test_incidents_accepted_but_not_stored_yet_show_as_waiting(client, project, settings):
    from ingest.inbox.accept import accept
    from ingest.inbox.process import process_pending

    settings.RCA_INGEST_INLINE = False  # as `make run`: the inbox processor stores them later
    accept(project, [shape_error(batch=b) for b in (2, 3, 4)])
    page = client.get("/").content.decode()
    assert "3 incidents accepted and waiting to be stored" in page
    process_pending(100)
    assert "waiting to be stored" not in client.get("/").content.decode()


def test_a_nul_in_a_filter_matches_what_was_stored_instead_of_failing(client, project):
    """PostgreSQL refuses a NUL in a query parameter (the page was a 500); a stored NUL is
    U+FFFD, so the filter is matched as stored, as the API's list filters are."""
    store(project, {"service": "a\x00b", "message": "half\x00way"})
    for name in ("q", "service", "model", "project", "error_type"):
        assert client.get(f"/?{name}=x%00").status_code == 200, name
    page = client.get("/?service=a%00b", HTTP_HX_REQUEST="true").content.decode()
    assert "half\ufffdway" in page
