"""SLO breaches through the whole product: HTTP in, the real worker, Slack (a local server).

One "SLO breach" message while a breach lasts, however many incidents or alert re-sends
keep it going; a new one after it clears (the periodic evaluation, run by the worker as
beat would) and recurs.
"""

from __future__ import annotations

import json
import time

import pytest
import requests
from werkzeug import Response

from rca import notify
from rca.models import Notification
from rca.queue.enqueue import publish
from rca.slo.defaults import rules_of
from rca.slo.models import SloBreach, SloRule
from rca.slo.tasks import EVALUATE_SLOS
from tests.support.factories import project_with_key
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

HOOK = "/services/T0/B0/slo"
WINDOW = 15  # seconds: room for three requests on a busy machine, short enough to wait out
OOM = {"service": "chat", "error_type": "torch.OutOfMemoryError", "message": "Tried to allocate"}


@pytest.fixture
def slack(httpserver) -> list[dict]:
    posts: list[dict] = []

    def handler(request):
        posts.append(json.loads(request.data))
        return Response("ok", content_type="text/plain")

    httpserver.expect_request(HOOK, method="POST").respond_with_handler(handler)
    return posts


@pytest.fixture
def tenant(httpserver, monkeypatch, settings):
    from rca.queue import intake

    settings.RCA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    # Only Slack matters here: no analyses (the new-issue messages still go out).
    monkeypatch.setattr(intake, "publish_analyses_on_commit", lambda *_, **__: None)
    tenant = project_with_key("slo-slack")
    notify.set_webhook(tenant.project, httpserver.url_for(HOOK))
    rules_of(tenant.project)
    return tenant


def breaches(posts: list[dict]) -> list[str]:
    return [p["text"] for p in posts if "SLO breach" in p["text"]]


def cleared_on_the_worker(project) -> bool:
    publish(EVALUATE_SLOS)
    time.sleep(0.5)
    return not SloBreach.objects.filter(project=project, ended_at__isnull=True).exists()


def test_an_oom_storm_sends_one_slo_breach_until_it_clears_and_recurs(
    live_server, celery_worker, tenant, slack
):
    SloRule.objects.filter(project=tenant.project, name="OOM frequency").update(
        window_seconds=WINDOW
    )

    def report(n: int) -> None:
        for _ in range(n):
            url = f"{live_server.url}/api/v1/incidents"
            resp = requests.post(url, json=OOM, headers=tenant.auth, timeout=60)
            assert resp.status_code == 202, resp.text

    report(3)
    wait_for(lambda: breaches(slack), timeout=60, interval=0.2)
    [text] = breaches(slack)
    assert "OOM frequency" in text and f"3 matching incidents within {WINDOW} s" in text
    report(3)  # the storm goes on
    publish(EVALUATE_SLOS)
    time.sleep(2)
    assert len(breaches(slack)) == 1

    wait_for(lambda: cleared_on_the_worker(tenant.project), timeout=WINDOW + 60, interval=1)
    report(3)
    wait_for(lambda: len(breaches(slack)) == 2, timeout=60, interval=0.2)
    time.sleep(1.5)
    assert len(breaches(slack)) == 2
    sent = Notification.objects.filter(project=tenant.project, kind="slo_breach", status="sent")
    assert sent.count() == 2


def test_a_latency_alert_is_one_breach_until_alertmanager_resolves_it(
    live_server, celery_worker, tenant, slack
):
    def alertmanager(status: str, starts: str) -> int:
        alert = {
            "status": status,
            "labels": {"alertname": "ModelP99LatencyHigh", "job": "vllm", "severity": "page"},
            "annotations": {"summary": "P99 latency of vllm is 3.1 s"},
            "startsAt": starts,
            "fingerprint": "5e1d2c3b4a596877",
        }
        body = {"version": "4", "status": status, "receiver": "rootcause", "alerts": [alert]}
        url = f"{live_server.url}/api/v1/alertmanager"
        return requests.post(url, json=body, headers=tenant.auth, timeout=60).status_code

    assert alertmanager("firing", "2026-12-04T10:00:00Z") == 202
    wait_for(lambda: breaches(slack), timeout=60, interval=0.2)
    [text] = breaches(slack)
    assert "Latency spike" in text and "1 firing alert (ModelP99LatencyHigh)" in text
    assert "15 s" in text
    assert alertmanager("firing", "2026-12-04T10:00:00Z") == 200  # repeat_interval re-send
    publish(EVALUATE_SLOS)
    time.sleep(2)
    assert len(breaches(slack)) == 1

    assert alertmanager("resolved", "2026-12-04T10:00:00Z") == 200
    wait_for(lambda: cleared_on_the_worker(tenant.project), timeout=30, interval=0.5)
    assert alertmanager("firing", "2026-12-04T11:00:00Z") == 202  # fires again
    wait_for(lambda: len(breaches(slack)) == 2, timeout=60, interval=0.2)
