"""What one project learns stays in that project: its cache, its accepted fixes, its rejections.

Two projects report the same failure. Everything goes the way users make it happen:
incidents POSTed to the API, analysed by the real worker, verdicts given in the UI.
"""

from __future__ import annotations

import pytest
import requests
from django.urls import reverse

from ingest.models import Incident
from rca.models import Analysis, Suggestion
from tests.support.corpus import store_embedded_runbooks
from tests.support.factories import ProjectWithKey, project_with_key, shape_error
from tests.support.processes import wait_for
from tests.support.ui import member

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def corpus(transactional_db):
    """The bundled runbooks, embedded (the test process may load the model; the web may not)."""
    store_embedded_runbooks()


def raised_in(function: str) -> dict:
    """The same failure raised from another function of the service: another issue (the
    fingerprint has the user's frames), the very same text for the embedder."""
    payload = shape_error(batch=4)
    payload["stacktrace"] = payload["stacktrace"].replace("in predict", f"in {function}")
    return payload


def analysed(live_server, tenant: ProjectWithKey, payload: dict) -> Analysis:
    """POST the incident, wait for the worker, return the analysis written for it."""
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents", json=payload, headers=tenant.auth, timeout=10
    )
    assert resp.status_code == 202, resp.text
    incident_id = resp.json()["incident_id"]
    wait_for(
        lambda: Incident.objects.get(pk=incident_id).analysis_status in ("done", "failed"),
        timeout=90,
        interval=0.3,
    )
    analysis = Analysis.objects.select_related("suggestion").get(incident_id=incident_id)
    assert analysis.status == "done", analysis.error
    return analysis


def give_verdict(client, suggestion: Suggestion, verdict: str) -> None:
    """A responder of the suggestion's project (logged in on `client`) decides in the UI."""
    response = client.post(
        reverse("decision", args=[suggestion.pk]), {"verdict": verdict, "note": "not this one"}
    )
    assert response.status_code == 302
    suggestion.refresh_from_db()
    assert suggestion.status == verdict


def slugs(analysis: Analysis, kind: str = "runbook") -> list[str]:
    return [r["slug"] for r in analysis.retrieved if r["kind"] == kind]


def test_an_identical_incident_in_another_project_does_not_reuse_its_analysis(
    live_server, celery_worker
):
    first = analysed(live_server, project_with_key("team-a"), shape_error(batch=4))
    other = analysed(live_server, project_with_key("team-b"), shape_error(batch=4))

    assert other.issue_id != first.issue_id
    assert not any("cache_hit_of_analysis" in a for a in other.attempts), other.attempts
    assert other.cache_key != first.cache_key
    assert other.suggestion.pk != first.suggestion.pk


def test_a_rejection_or_an_accepted_fix_in_one_project_changes_nothing_in_another(
    live_server, celery_worker, client
):
    team_a, team_b = project_with_key("team-a"), project_with_key("team-b")
    a_first = analysed(live_server, team_a, shape_error(batch=4))
    b_first = analysed(live_server, team_b, shape_error(batch=4))
    cited = a_first.suggestion.runbook_slug
    assert slugs(a_first)[0] == slugs(b_first)[0] == cited

    # Project A rejects the runbook: A's next near-identical incident ranks it lower.
    client.force_login(member(team_a.project, "alice"))  # a responder of A only
    give_verdict(client, a_first.suggestion, "rejected")
    a_second = analysed(live_server, team_a, raised_in("rank_items"))
    assert a_second.issue_id != a_first.issue_id
    assert slugs(a_second)[0] != cited, slugs(a_second)

    # Project A accepts that incident's fix: A's next similar incident gets it as knowledge.
    give_verdict(client, a_second.suggestion, "accepted")
    a_third = analysed(live_server, team_a, raised_in("score_batch"))
    past = [r for r in a_third.retrieved if r["kind"] == "past_fix"]
    assert [p["issue_id"] for p in past] == [a_second.issue_id]

    # Project B sees the same incident: its ranking and suggestion are as before A decided.
    b_second = analysed(live_server, team_b, raised_in("rank_items"))
    assert slugs(b_second)[0] == cited, slugs(b_second)
    assert b_second.suggestion.runbook_slug == b_first.suggestion.runbook_slug == cited
    assert slugs(b_second, "past_fix") == []
    demoted_in_a = {r["slug"]: r["fused"] for r in a_second.retrieved}.get(cited, 0.0)
    assert {r["slug"]: r["fused"] for r in b_second.retrieved}[cited] > demoted_in_a
    shown = requests.get(
        f"{live_server.url}/api/v1/incidents/{b_second.incident_id}/analysis",
        headers=team_b.auth,
        timeout=5,
    ).json()
    assert all(r["kind"] == "runbook" for r in shown["analysis"]["retrieved"])
