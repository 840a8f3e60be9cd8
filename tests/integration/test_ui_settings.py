"""Project settings: keys shown once and revocable, DSN shown, Slack webhook masked."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ingest.models import ApiKey
from tests.support.factories import project_with_key
from tests.support.ui import member

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(client):
    project = project_with_key("ml-platform").project
    client.force_login(member(project, "alice"))
    return project


def test_new_key_is_shown_once_without_javascript(client, project):
    response = client.post(reverse("create-key", args=[project.slug]), {"name": "ranker-prod"})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "copy it now" in page and 'value="rc_' in page
    assert "copy it now" not in client.get(response["Location"]).content.decode()
    assert ApiKey.objects.filter(project=project, name="ranker-prod").exists()


def test_key_created_and_revoked_with_htmx(client, project):
    fragment = client.post(
        reverse("create-key", args=[project.slug]), {"name": "k2"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert fragment.lstrip().startswith('<section id="api-keys"') and 'value="rc_' in fragment
    key = ApiKey.objects.get(name="k2")
    revoked = client.post(
        reverse("revoke-key", args=[project.slug, key.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "revoked" in revoked
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_settings_page_shows_the_dsn(client, project):
    html = client.get(reverse("project-settings", args=[project.slug])).content.decode()
    assert f"{project.sentry_key}@" in html and f"/{project.pk}" in html


def test_webhook_is_validated_and_masked(client, project):
    url = reverse("slack-webhook", args=[project.slug])
    bad = client.post(url, {"webhook_url": "not a url"}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 200 and 'role="alert"' in bad.content.decode()
    secret = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXsecret1234"
    saved = client.post(url, {"webhook_url": secret})
    assert saved.status_code == 302
    html = client.get(saved["Location"]).content.decode()
    assert "secret1234" not in html and "hooks.slack.com/…1234" in html


def test_test_message_button_posts_once_and_shows_the_result(client, project, httpserver, settings):
    settings.RCA_WEBHOOK_ALLOWED_HOSTS = ["localhost"]
    hook = httpserver.url_for("/services/T0/B0/abcd")
    httpserver.expect_oneshot_request("/services/T0/B0/abcd", method="POST").respond_with_data("ok")
    saved = client.post(reverse("slack-webhook", args=[project.slug]), {"webhook_url": hook})
    assert saved.status_code in (200, 302)
    url = reverse("slack-test", args=[project.slug])
    html = client.post(url, HTTP_HX_REQUEST="true").content.decode()
    assert len(httpserver.log) == 1  # exactly one POST reached "Slack"
    assert "Test message delivered" in html

    httpserver.expect_oneshot_request("/services/T0/B0/abcd").respond_with_data(
        "no_service", status=404
    )
    response = client.post(url)  # without JavaScript: redirect, the outcome as a message
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "404 no_service" in page
    assert len(httpserver.log) == 2


def test_viewer_sees_no_forms(client):
    project = project_with_key("team-b").project
    client.force_login(member(project, "victor", "viewer"))
    html = client.get(reverse("project-settings", args=[project.slug])).content.decode()
    assert "Create key" not in html and "Send test message" not in html


def test_a_nul_in_a_key_name_or_a_webhook_url_is_kept_or_refused_not_a_500(client, project):
    """PostgreSQL stores no NUL: saving either was a 500."""
    client.post(reverse("create-key", args=[project.slug]), {"name": "ranker\x00prod"})
    assert ApiKey.objects.filter(project=project, name="ranker\ufffdprod").exists()
    hook = "https://hooks.slack.com/services/T000/B000/XXXX\x00"
    url = reverse("slack-webhook", args=[project.slug])
    refused = client.post(url, {"webhook_url": hook}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 200 and "control character" in refused.content.decode()
