"""Rotating keys from project settings, over real HTTP: the old key fails at once, the new works.

Viewers see the settings page without any secret on it.
"""

from __future__ import annotations

import json
import re

import pytest
import requests
from django.urls import reverse

from ingest.models import ApiKey
from ingest.projects import project_dsn
from tests.support.factories import project_with_key
from tests.support.ui import member

pytestmark = pytest.mark.django_db(transaction=True)

INCIDENT = {"service": "ranker", "error_type": "RuntimeError", "message": "CUDA out of memory"}


def post_incident(live_server, key: str) -> requests.Response:
    return requests.post(
        f"{live_server.url}/api/v1/incidents",
        json=INCIDENT,
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )


def shown_key(html: str) -> str:
    found = re.search(r'id="new-key"[^>]*value="(rc_[^"]+)"', html)
    assert found, html
    return found.group(1)


def test_rotated_key_is_refused_at_once_and_the_new_one_accepted(client, live_server):
    tenant = project_with_key("ml-platform")
    client.force_login(member(tenant.project, "alice"))
    assert post_incident(live_server, tenant.key).status_code == 202
    old = ApiKey.objects.get(project=tenant.project)

    fragment = client.post(
        reverse("rotate-key", args=[tenant.project.slug, old.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    new_key = shown_key(fragment)
    assert "copy it now" in fragment and new_key != tenant.key

    refused = post_incident(live_server, tenant.key)
    assert refused.status_code == 401
    assert post_incident(live_server, new_key).status_code == 202
    new = ApiKey.objects.get(project=tenant.project, revoked_at__isnull=True)
    assert new.name == old.name and new.pk != old.pk


def test_rotation_without_javascript_shows_the_new_key_once(client, live_server):
    tenant = project_with_key("ml-platform")
    client.force_login(member(tenant.project, "alice"))
    old = ApiKey.objects.get(project=tenant.project)
    response = client.post(reverse("rotate-key", args=[tenant.project.slug, old.pk]))
    assert response.status_code == 302
    new_key = shown_key(client.get(response["Location"]).content.decode())
    assert "copy it now" not in client.get(response["Location"]).content.decode()
    assert post_incident(live_server, tenant.key).status_code == 401
    assert post_incident(live_server, new_key).status_code == 202
    # rotating the (now revoked) old key again creates nothing
    client.post(reverse("rotate-key", args=[tenant.project.slug, old.pk]))
    assert ApiKey.objects.filter(project=tenant.project, revoked_at__isnull=True).count() == 1


def test_rotated_dsn_refuses_the_old_key(client, live_server):
    tenant = project_with_key("ml-platform")
    client.force_login(member(tenant.project, "alice"))
    project = tenant.project
    old_key = project.sentry_key
    event = json.dumps({"message": "CUDA error: device-side assert triggered", "level": "error"})

    def store(key: str) -> requests.Response:
        return requests.post(
            f"{live_server.url}/api/{project.pk}/store/?sentry_key={key}",
            data=event,
            headers={"Content-Type": "application/json"},
            timeout=10,
        )

    assert store(old_key).status_code == 200
    html = client.post(
        reverse("rotate-dsn", args=[project.slug]), HTTP_HX_REQUEST="true"
    ).content.decode()
    project.refresh_from_db()
    assert project.sentry_key != old_key and project_dsn(project) in html
    assert store(old_key).status_code == 401
    assert store(project.sentry_key).status_code == 200


def test_viewer_sees_no_key_material_dsn_or_webhook(client, live_server):
    tenant = project_with_key("ml-platform")
    project = tenant.project
    hook = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXsecret1234"
    project.slack_webhook_url = hook
    project.save()
    key = ApiKey.objects.get(project=project)

    client.force_login(member(project, "victor", "viewer"))
    response = client.get(reverse("project-settings", args=[project.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "ml-platform" in html.lower() and key.name in html  # the page itself is there
    assert key.prefix not in html and "rc_" not in html
    assert project.sentry_key not in html and "/api/" not in html
    assert "hooks.slack.com" not in html and "secret1234" not in html and "…1234" not in html
    assert "Only responders of this project see the DSN" in html

    # and cannot rotate anything
    forbidden = client.post(reverse("rotate-key", args=[project.slug, key.pk]))
    assert forbidden.status_code == 403
    assert client.post(reverse("rotate-dsn", args=[project.slug])).status_code == 403
    assert post_incident(live_server, tenant.key).status_code == 202
