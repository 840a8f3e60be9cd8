"""The session, CSRF, user and messages layers serve the UI only (webapp/page_middleware.py):
an API client that also holds a logged-in session cookie is answered as any keyed client,
with the same security headers, and the UI still gets its session, user and CSRF check."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.support.factories import project_with_key, shape_error
from webapp.page_middleware import serves_machines

pytestmark = pytest.mark.django_db


def test_which_paths_skip_the_page_layers() -> None:
    assert serves_machines("/api/v1/incidents")
    assert serves_machines("/api/3/envelope/")
    assert serves_machines("/otlp/v1/logs")
    assert not serves_machines("/api/v1/docs")  # an HTML page
    assert not serves_machines("/")
    assert not serves_machines("/admin/")
    assert not serves_machines("/healthz")


def test_api_post_with_a_session_cookie_is_keyed_and_sets_no_cookie() -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.create_user("alice", password="pw-long-enough-1"))
    key = project_with_key().key
    response = client.post(
        "/api/v1/incidents",
        json.dumps(shape_error(8)),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert response.status_code == 202
    assert not response.cookies
    assert "Cookie" not in response.get("Vary", "")
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert not hasattr(response.wsgi_request, "session")
    # A session does not stand in for the key.
    refused = client.post(
        "/api/v1/incidents", json.dumps(shape_error(8)), content_type="application/json"
    )
    assert refused.status_code == 401


def test_the_ui_keeps_its_session_user_and_csrf_check() -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.create_user("bob", password="pw-long-enough-1"))
    page = client.get("/")
    assert page.status_code == 200
    assert page.wsgi_request.user.username == "bob"
    assert client.post("/accounts/logout/").status_code == 403  # no CSRF token
