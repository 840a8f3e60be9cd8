"""Who sees what: login everywhere, 404 across projects, responders only for changes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from rca.models import Decision
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import analysed, member, store

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    tenant = project_with_key("ml-platform")
    incident = store(tenant.project, shape_error(batch=4))
    suggestion = analysed(incident)
    return tenant.project, incident, suggestion


def test_every_page_asks_anonymous_users_to_log_in(client, setup):
    project, incident, suggestion = setup
    for url in [
        "/",
        reverse("issue", args=[incident.issue_id]),
        reverse("analysis", args=[incident.pk]),
        reverse("runbooks"),
        reverse("settings"),
        reverse("project-settings", args=[project.slug]),
    ]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next="), url
    response = client.post(reverse("decision", args=[suggestion.pk]), {"verdict": "accepted"})
    assert response.status_code == 302
    assert not Decision.objects.exists()


def test_login_page_logs_in_and_sends_security_headers(client, setup):
    project, _, _ = setup
    member(project, "alice")
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert "default-src 'self'" in page["Content-Security-Policy"]
    assert page["X-Frame-Options"] == "DENY"
    assert page["X-Content-Type-Options"] == "nosniff"
    response = client.post(
        "/accounts/login/", {"username": "alice", "password": "correct-horse-battery"}
    )
    assert response.status_code == 302 and response["Location"] == "/"
    timeline = client.get("/")
    assert timeline.status_code == 200
    assert "no-store" in timeline["Cache-Control"]
    assert "script-src 'self'" in timeline["Content-Security-Policy"]


def test_user_of_another_project_gets_404_everywhere(client, setup):
    project, incident, suggestion = setup
    other = project_with_key("other-team").project
    client.force_login(member(other, "mallory", "responder"))
    assert client.get(reverse("issue", args=[incident.issue_id])).status_code == 404
    assert (
        client.get(reverse("analysis", args=[incident.pk]), HTTP_HX_REQUEST="true").status_code
        == 404
    )
    assert client.get(reverse("project-settings", args=[project.slug])).status_code == 404
    forged = client.post(reverse("decision", args=[suggestion.pk]), {"verdict": "accepted"})
    assert forged.status_code == 404
    assert client.post(reverse("reanalyse", args=[incident.pk])).status_code == 404
    assert client.post(reverse("create-key", args=[project.slug])).status_code == 404
    assert incident.issue.title not in client.get("/").content.decode()
    assert not Decision.objects.exists()


def test_viewer_reads_but_sees_no_buttons_and_cannot_post(client, setup):
    project, incident, suggestion = setup
    client.force_login(member(project, "victor", "viewer"))
    page = client.get(reverse("issue", args=[incident.issue_id])).content.decode()
    assert suggestion.action in page
    assert ">Accept</button>" not in page and "Re-analyse" not in page
    assert ">Resolve</button>" not in page
    assert (
        client.post(reverse("decision", args=[suggestion.pk]), {"verdict": "accepted"}).status_code
        == 403
    )
    assert (
        client.post(
            reverse("issue-status", args=[incident.issue_id]), {"status": "resolved"}
        ).status_code
        == 403
    )
    assert client.post(reverse("create-key", args=[project.slug])).status_code == 403
    assert not Decision.objects.exists()
    incident.issue.refresh_from_db()
    assert incident.issue.status == "open"


def test_logout_is_a_post_that_returns_to_the_login_page(client, setup):
    project, _, _ = setup
    client.force_login(member(project, "alice"))
    response = client.post(reverse("logout"))
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert client.get("/").status_code == 302
