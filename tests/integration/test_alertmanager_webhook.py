"""Alertmanager's webhook over the full middleware stack: alerts in, issues grouped and closed."""

from __future__ import annotations

import copy
import json

import pytest

from ingest.models import Incident, Issue
from tests.support.factories import project_with_key

pytestmark = pytest.mark.django_db

URL = "/api/v1/alertmanager"


def alert(
    name: str = "ModelP99LatencyHigh",
    *,
    status: str = "firing",
    fingerprint: str = "7c1f0a9e3b2d4c5f",
    starts: str = "2026-12-04T10:00:00Z",
    **labels: str,
) -> dict:
    return {
        "status": status,
        "labels": {"alertname": name, "job": "vllm", "severity": "page", **labels},
        "annotations": {
            "summary": "P99 latency of vllm is 3.1 s",
            "description": "P99 request latency has been above 2 s for 15 s.",
            "runbook_url": "https://runbooks.example/latency",
        },
        "startsAt": starts,
        "endsAt": "0001-01-01T00:00:00Z" if status == "firing" else "2026-12-04T10:30:00Z",
        "generatorURL": "http://prometheus:9090/graph?g0.expr=x",
        "fingerprint": fingerprint,
    }


def notification(*alerts: dict) -> dict:
    status = "firing" if any(a["status"] == "firing" for a in alerts) else "resolved"
    return {
        "version": "4",
        "groupKey": '{}:{alertname="ModelP99LatencyHigh"}',
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "rootcause",
        "groupLabels": {"alertname": alerts[0]["labels"]["alertname"]},
        "commonLabels": {"job": "vllm"},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": list(alerts),
    }


@pytest.fixture
def tenant():
    return project_with_key()


def post(client, tenant, body) -> object:
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post(URL, data=data, content_type="application/json", headers=tenant.auth)


def test_a_firing_alert_becomes_an_incident_with_its_labels_as_context(client, tenant):
    resp = post(client, tenant, notification(alert(service="ranker", model="llama-3-8b")))
    assert resp.status_code == 202, resp.content
    assert resp.json()["accepted"] == 1
    incident = Incident.objects.get(project=tenant.project)
    assert incident.service == "ranker"  # the service label wins over job
    assert incident.error_type == "ModelP99LatencyHigh"
    assert incident.message.startswith("P99 latency of vllm is 3.1 s\n\nP99 request latency")
    assert incident.tags["job"] == "vllm" and incident.tags["severity"] == "page"
    assert incident.tags["annotation.runbook_url"] == "https://runbooks.example/latency"
    assert incident.model_id == "llama-3-8b"
    assert incident.occurred_at.isoformat() == "2026-12-04T10:00:00+00:00"


def test_the_job_label_names_the_service_when_there_is_no_service_label(client, tenant):
    post(client, tenant, notification(alert()))
    assert Incident.objects.get(project=tenant.project).service == "vllm"


def test_a_resent_firing_alert_is_stored_once(client, tenant):
    body = notification(alert())
    first, again = post(client, tenant, body), post(client, tenant, body)
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["duplicates"] == 1
    assert first.json()["event_ids"] == again.json()["event_ids"]
    assert Incident.objects.filter(project=tenant.project).count() == 1
    assert Issue.objects.get(project=tenant.project).occurrence_count == 1


def test_alerts_group_by_fingerprint_not_by_name(client, tenant):
    post(client, tenant, notification(alert(fingerprint="aaaa"), alert(fingerprint="bbbb")))
    post(client, tenant, notification(alert(fingerprint="aaaa", starts="2026-12-04T11:00:00Z")))
    counts = sorted(
        Issue.objects.filter(project=tenant.project).values_list("occurrence_count", flat=True)
    )
    assert counts == [1, 2]


def test_a_resolved_alert_resolves_its_issue_and_a_new_firing_reopens_it(client, tenant):
    post(client, tenant, notification(alert(), alert(fingerprint="other")))
    resp = post(client, tenant, notification(alert(status="resolved")))
    assert resp.status_code == 200 and resp.json()["resolved"] == 1
    by_fp = {i.tags["alertmanager.fingerprint"]: i.issue for i in Incident.objects.all()}
    assert by_fp["7c1f0a9e3b2d4c5f"].status == "resolved"
    assert by_fp["other"].status == "open"  # only the resolved alert's issue

    post(client, tenant, notification(alert(starts="2026-12-04T12:00:00Z")))
    issue = Issue.objects.get(pk=by_fp["7c1f0a9e3b2d4c5f"].pk)
    assert issue.status == "open" and issue.occurrence_count == 2
    assert Incident.objects.filter(issue=issue).latest("pk").opened_issue == "regressed"


@pytest.mark.parametrize(
    ("mutate", "loc"),
    [
        (
            lambda b: b["alerts"][0].update(status="pending"),
            ["body", "payload", "alerts", 0, "status"],
        ),
        (lambda b: b["alerts"][0].pop("startsAt"), ["body", "payload", "alerts", 0, "startsAt"]),
        (
            lambda b: b["alerts"][1].update(startsAt="yesterday"),
            ["body", "payload", "alerts", 1, "startsAt"],
        ),
        (
            lambda b: b["alerts"][0]["labels"].update(job=["x"]),
            ["body", "payload", "alerts", 0, "labels", "job"],
        ),
        (lambda b: b.update(alerts=[]), ["body", "payload", "alerts"]),
        (lambda b: b.pop("status"), ["body", "payload", "status"]),
        (
            lambda b: b["alerts"][0]["labels"].update({f"l{i}": "v" for i in range(80)}),
            ["body", "payload", "alerts", 0, "labels"],
        ),
    ],
)
def test_a_malformed_payload_is_refused_naming_the_field(client, tenant, mutate, loc):
    body = copy.deepcopy(notification(alert(), alert(fingerprint="b")))
    mutate(body)
    resp = post(client, tenant, body)
    assert resp.status_code == 400, resp.content
    assert loc in [d["loc"] for d in resp.json()["detail"]]
    assert not Incident.objects.exists()


def test_too_many_alerts_are_refused_and_nothing_is_stored(client, tenant, settings):
    settings.RCA_MAX_BATCH = 3
    body = notification(*(alert(fingerprint=f"f{i}") for i in range(4)))
    resp = post(client, tenant, body)
    assert resp.status_code == 400
    assert resp.json()["detail"][0]["loc"] == ["body", "payload", "alerts"]
    assert not Incident.objects.exists()


def test_without_the_project_key_nothing_is_accepted(client, tenant):
    resp = client.post(URL, data=json.dumps(notification(alert())), content_type="application/json")
    assert resp.status_code == 401
    assert not Incident.objects.exists()


def test_the_endpoint_is_in_the_openapi_document(client):
    doc = client.get("/api/v1/openapi.json").json()
    operation = doc["paths"]["/api/v1/alertmanager"]["post"]
    assert {"202", "400", "401"} <= set(operation["responses"])


@pytest.mark.inbox
def test_a_resolve_finds_its_firing_still_waiting_in_the_inbox(client, tenant):
    from ingest.models import InboxItem

    resp = post(client, tenant, notification(alert()))
    assert resp.status_code == 202
    assert InboxItem.objects.count() == 1 and not Incident.objects.exists()  # accepted, waiting
    resp = post(client, tenant, notification(alert(status="resolved")))
    assert resp.json()["resolved"] == 1
    assert Issue.objects.get(project=tenant.project).status == "resolved"
    assert not InboxItem.objects.exists()


def test_a_body_over_the_ingest_limit_is_refused_before_parsing(client, tenant, settings):
    settings.RCA_MAX_BODY_BYTES = 4000
    big = alert()
    big["annotations"]["description"] = "x" * 5000
    resp = post(client, tenant, notification(big))
    assert resp.status_code == 413
    assert resp.json()["detail"][0]["loc"] == ["body"]
    assert not Incident.objects.exists()
