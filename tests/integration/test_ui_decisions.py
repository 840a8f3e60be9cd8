"""Accept / reject: with htmx the card is swapped, without JavaScript POST -> redirect."""

from __future__ import annotations

import pytest
from django.urls import reverse

from rca.feedback import DecisionError, decide
from rca.models import Decision, Suggestion
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import analysed, member, store

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(client):
    project = project_with_key("ml-platform").project
    user = member(project, "alice")
    client.force_login(user)
    incident = store(project, shape_error(batch=4))
    return user, incident, analysed(incident)


def test_rejecting_needs_a_note_and_both_verdicts_are_kept_as_history(case):
    user, _, suggestion = case
    with pytest.raises(DecisionError, match="why"):
        decide(suggestion, user, "rejected", "  ")
    decide(suggestion, user, "accepted")
    decide(suggestion, user, "rejected", "wrong layer")
    suggestion.refresh_from_db()
    assert suggestion.status == "rejected" and suggestion.decided_at is not None
    assert list(Decision.objects.order_by("pk").values_list("verdict", "note")) == [
        ("accepted", ""),
        ("rejected", "wrong layer"),
    ]


def test_accept_with_htmx_swaps_the_panel_and_announces_it(client, case):
    user, incident, suggestion = case
    response = client.post(
        reverse("decision", args=[suggestion.pk]), {"verdict": "accepted"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert response["HX-Trigger"] == "suggestion-decided"
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="analysis-panel"')
    assert 'data-status="accepted"' in html and "by alice" in html
    assert Suggestion.objects.get().status == "accepted"


def test_accept_without_javascript_redirects_back_to_the_incident(client, case):
    _, incident, suggestion = case
    response = client.post(reverse("decision", args=[suggestion.pk]), {"verdict": "accepted"})
    assert response.status_code == 302
    assert response["Location"] == f"/issues/{incident.issue_id}?incident={incident.pk}"
    page = client.get(response["Location"]).content.decode()
    assert 'data-status="accepted"' in page


def test_reject_without_a_note_shows_the_error_with_200_in_both_modes(client, case):
    _, _, suggestion = case
    url = reverse("decision", args=[suggestion.pk])
    for headers in ({"HTTP_HX_REQUEST": "true"}, {}):
        response = client.post(url, {"verdict": "rejected", "note": ""}, **headers)
        assert response.status_code == 200
        assert "say why you reject it" in response.content.decode()
    assert not Decision.objects.exists()
    assert Suggestion.objects.get().status == "proposed"


def test_reject_with_a_note_records_who_and_why(client, case):
    _, _, suggestion = case
    response = client.post(
        reverse("decision", args=[suggestion.pk]),
        {"verdict": "rejected", "note": "the <b>head</b> is fine"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert "the &lt;b&gt;head&lt;/b&gt; is fine" in html
    assert Decision.objects.get().user.username == "alice"
