"""Slack through the whole product: API -> worker -> pipeline -> Slack, once per issue and event."""

from __future__ import annotations

import json
import time

import pytest
import requests

from ingest.models import Incident
from rca import notify
from rca.models import Notification, Suggestion
from tests.support.factories import project_with_key, shape_error
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def corpus(transactional_db):
    from tests.support.corpus import store_embedded_runbooks

    store_embedded_runbooks()


def test_new_issue_and_its_suggestion_each_post_once(
    live_server, httpserver, celery_worker, settings
):
    settings.RCA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    posts: list[dict] = []

    def slack(request):
        from werkzeug import Response

        posts.append(json.loads(request.data))
        return Response("ok", content_type="text/plain")

    httpserver.expect_request("/services/T0/B0/hook", method="POST").respond_with_handler(slack)
    tenant = project_with_key("slack-flow")
    notify.set_webhook(tenant.project, httpserver.url_for("/services/T0/B0/hook"))

    def report(batch: int) -> int:
        resp = requests.post(
            f"{live_server.url}/api/v1/incidents",
            json=shape_error(batch),
            headers=tenant.auth,
            timeout=10,
        )
        assert resp.status_code == 202, resp.text
        return resp.json()["incident_id"]

    first = report(4)
    wait_for(lambda: len(posts) >= 2, timeout=90, interval=0.3)
    kinds = sorted(p["text"].split(" in ")[0] for p in posts)
    assert kinds == ["New issue", "Suggested fix"]
    suggestion = Suggestion.objects.get(incident_id=first)
    fix = next(p for p in posts if p["text"].startswith("Suggested fix"))
    assert any(suggestion.action[:40] in json.dumps(block) for block in fix["blocks"])

    second = report(4)  # the same bug again: no new issue, no new suggestion
    wait_for(lambda: Incident.objects.get(pk=second).analysis_status == "done", timeout=60)
    time.sleep(1.5)  # a duplicate send, if any, would arrive within the worker's poll interval
    assert len(posts) == 2
    assert Notification.objects.filter(issue__project=tenant.project, status="sent").count() == 2
