"""Weak evidence end to end (issue 16 item 4): API -> broker -> real worker -> a stored
abstention, shown by the API and the issue page as "No confident suggestion" with the
closest runbooks and what evidence would help, and posted to Slack without an action."""

from __future__ import annotations

import pytest
import requests
from django.urls import reverse

from ingest.models import Incident
from rca.models import Suggestion
from rca.notify.creation import _issue_event
from rca.suggestion.confidence import load_calibration
from tests.support.corpus import store_embedded_runbooks
from tests.support.factories import project_with_key, shape_error
from tests.support.processes import wait_for
from tests.support.ui import member

pytestmark = pytest.mark.django_db(transaction=True)

#: A bare message that no runbook is about: no traceback, no logs, no versions.
BARE = {
    "service": "widgets",
    "error_type": "RuntimeError",
    "message": "widget service returned an unexpected reply",
}


@pytest.fixture(autouse=True)
def corpus(transactional_db):
    store_embedded_runbooks()


def _analysed(live_server, tenant, payload) -> Incident:
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents", json=payload, headers=tenant.auth, timeout=10
    )
    assert resp.status_code in (200, 202), resp.text
    incident_id = resp.json()["incident_id"]

    def done() -> Incident | None:
        incident = Incident.objects.get(pk=incident_id)
        return incident if incident.analysis_status in ("done", "failed") else None

    incident = wait_for(done, timeout=90, interval=0.3)
    assert incident.analysis_status == "done"
    return incident


def test_weak_evidence_is_stored_and_shown_as_no_confident_suggestion(
    live_server, celery_worker, client
):
    tenant = project_with_key("abstain")
    incident = _analysed(live_server, tenant, BARE)
    suggestion = Suggestion.objects.get(incident=incident)
    assert suggestion.abstained, (suggestion.confidence, suggestion.action)
    assert suggestion.confidence < load_calibration().threshold
    closest = suggestion.abstention["closest"]
    retrieved = [r["slug"] for r in suggestion.analysis.retrieved if r.get("kind") == "runbook"]
    assert closest and [c["slug"] for c in closest] == retrieved[: len(closest)]
    assert any("traceback" in w for w in suggestion.abstention["wanted"])

    shown = requests.get(
        f"{live_server.url}/api/v1/incidents/{incident.pk}/analysis",
        headers=tenant.auth,
        timeout=5,
    ).json()["analysis"]["suggestion"]
    assert shown["abstained"] is True
    assert shown["abstention"]["closest"][0] == closest[0]
    assert shown["abstention"]["wanted"] == suggestion.abstention["wanted"]

    client.force_login(member(tenant.project, "alice"))
    html = client.get(reverse("issue", args=[incident.issue_id])).content.decode()
    panel = html[html.index('id="analysis-panel"') :]
    assert 'data-testid="no-confident-suggestion"' in panel
    assert closest[0]["title"] in panel
    assert "What evidence would help" in panel and "traceback" in panel
    assert "Low-confidence guess (not a suggestion)" in panel

    payload = _issue_event("suggestion", incident.issue, suggestion)
    text = str(payload["blocks"])
    assert "No confident suggestion" in payload["text"]
    assert "Suggested action" not in text and suggestion.action not in text
    assert "Closest runbooks" in text and "accept" not in text.lower()


def test_strong_evidence_is_not_an_abstention(live_server, celery_worker, client):
    tenant = project_with_key("confident")
    incident = _analysed(live_server, tenant, shape_error(batch=4))
    suggestion = Suggestion.objects.get(incident=incident)
    assert not suggestion.abstained and suggestion.abstention == {}
    assert suggestion.confidence >= load_calibration().threshold
    client.force_login(member(tenant.project, "alice"))
    html = client.get(reverse("issue", args=[incident.issue_id])).content.decode()
    assert 'data-testid="no-confident-suggestion"' not in html
