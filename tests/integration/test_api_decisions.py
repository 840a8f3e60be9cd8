"""Decisions over the API: the same rules as the UI, recorded with the key that made them."""

from __future__ import annotations

import pytest
from django.test import Client

from rca.models import Decision, Suggestion
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import analysed, member, store

pytestmark = pytest.mark.django_db


def decide(client: Client, key: str, suggestion_id: int, body: dict):
    return client.post(
        f"/api/v1/suggestions/{suggestion_id}/decision",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )


@pytest.fixture
def tenant():
    return project_with_key("ml-platform")


@pytest.fixture
def suggestion(tenant) -> Suggestion:
    return analysed(store(tenant.project, shape_error(batch=4)))


def test_accept_answers_the_suggestion_with_its_new_status(client, tenant, suggestion):
    response = decide(client, tenant.key, suggestion.pk, {"verdict": "accepted"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["id"], body["status"]) == (suggestion.pk, "accepted")
    assert body["decided_at"]
    decision = Decision.objects.get(suggestion=suggestion)
    assert decision.user is None and decision.actor.startswith("API key default (rc_")
    assert tenant.key not in decision.actor  # the prefix names the key; the secret stays out


def test_the_ui_history_says_which_key_decided(client, tenant, suggestion):
    decide(client, tenant.key, suggestion.pk, {"verdict": "rejected", "note": "already 512"})
    client.force_login(member(tenant.project, "alice", "viewer"))
    html = client.get(f"/issues/{suggestion.issue_id}").content.decode()
    assert "rejected</strong> by API key default (rc_" in html
    assert "already 512" in html


def test_reject_without_a_note_is_refused_like_in_the_ui(client, tenant, suggestion):
    response = decide(client, tenant.key, suggestion.pk, {"verdict": "rejected"})
    assert response.status_code == 400
    [error] = response.json()["detail"]
    assert error["loc"][-1] == "note" and "say why" in error["msg"]
    suggestion.refresh_from_db()
    assert suggestion.status == "proposed" and not Decision.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"verdict": "maybe"}, "verdict"),
        ({}, "verdict"),
        ({"verdict": "accepted", "note": "x" * 2001}, "note"),
    ],
)
def test_a_malformed_decision_names_the_field(client, tenant, suggestion, body, field):
    response = decide(client, tenant.key, suggestion.pk, body)
    assert response.status_code == 400
    assert any(error["loc"][-1] == field for error in response.json()["detail"])
    assert not Decision.objects.exists()


def test_another_projects_key_cannot_see_or_decide(client, suggestion):
    other = project_with_key("other-team")
    response = decide(client, other.key, suggestion.pk, {"verdict": "accepted"})
    assert response.status_code == 404
    assert decide(client, "rc_nope_nope", suggestion.pk, {"verdict": "accepted"}).status_code == 401
    suggestion.refresh_from_db()
    assert suggestion.status == "proposed" and not Decision.objects.exists()
