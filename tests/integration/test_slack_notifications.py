"""Slack notifications through a real worker to a local server speaking the webhook protocol.

The module runs its own worker on its own queue, started with the settings the worker
needs (127.0.0.1 allowed as a webhook host, short timeouts and backoff), so a session
worker without them can never pick up these messages.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field

import pytest
from django.db import connection
from werkzeug import Request, Response

from ingest.models import Incident, Issue, Project
from ingest.store import store_incident, store_incidents
from rca import notify
from rca.models import Analysis, Notification, Suggestion
from rca.notify.slack import WebhookURLNotAllowed
from tests.support.factories import project_with_key, shape_error
from tests.support.processes import Worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

HOOK_PATH = "/services/T0001/B0001/s3cr3tW3bh00k"
QUEUE = f"slack-test-{uuid.uuid4().hex[:8]}"
MAX_ATTEMPTS = 3
THRESHOLD = 3
WINDOW_MINUTES = 0.1  # 6 s: the digest goes out 6 s after the first folded issue
BURST_LIMIT = 2
BURST_SECONDS = 60  # every new issue a test here opens is one burst
WORKER_ENV = {
    "RCA_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
    "RCA_SLACK_MAX_ATTEMPTS": str(MAX_ATTEMPTS),
    "RCA_SLACK_TIMEOUT": "0.5",
    "RCA_SLACK_BACKOFF_SECONDS": "0.2",
    "RCA_SLACK_DIGEST_WINDOW_MINUTES": str(WINDOW_MINUTES),
    "RCA_SLACK_DIGEST_THRESHOLD": str(THRESHOLD),
    "RCA_SLACK_BURST_LIMIT": str(BURST_LIMIT),
    "RCA_SLACK_BURST_SECONDS": str(BURST_SECONDS),
    "RCA_TASK_QUEUES": f"rca.tasks.send_notification={QUEUE}",  # retries and digests
}


@dataclass
class SlackHook:
    """An incoming webhook: answers a script of (status, body, headers, delay), then 200 ok."""

    script: list[tuple[int, str, dict, float]] = field(default_factory=list)
    posts: list[tuple[float, dict, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Response:
        with self.lock:
            status, body, headers, delay = (
                self.script.pop(0) if self.script else (200, "ok", {}, 0.0)
            )
            self.posts.append((time.monotonic(), json.loads(request.data), status))
        if delay:
            time.sleep(delay)
        return Response(body, status=status, headers=headers, content_type="text/plain")

    def payloads(self) -> list[dict]:
        return [payload for _, payload, _ in self.posts]


@pytest.fixture
def hook(slack_server) -> SlackHook:
    slack_server.clear()
    answer = SlackHook()
    slack_server.expect_request(HOOK_PATH, method="POST").respond_with_handler(answer)
    return answer


@pytest.fixture(scope="module")
def slack_worker(broker_url, tmp_path_factory):
    """A worker on QUEUE with the Slack settings above; our task is routed to it."""
    worker = Worker(
        dict(connection.settings_dict),
        broker_url,
        tmp_path_factory.mktemp("slack-worker"),
        queues=QUEUE,
        extra_env=WORKER_ENV,
    )
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()


@pytest.fixture(autouse=True)
def _slack_settings(settings, slack_worker):
    """The test process decides digests and validates URLs: same settings as the worker."""
    settings.RCA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.RCA_SLACK_MAX_ATTEMPTS = MAX_ATTEMPTS
    settings.RCA_SLACK_TIMEOUT = 0.5
    settings.RCA_SLACK_BACKOFF_SECONDS = 0.2
    settings.RCA_SLACK_DIGEST_THRESHOLD = THRESHOLD
    settings.RCA_SLACK_DIGEST_WINDOW_MINUTES = WINDOW_MINUTES
    settings.RCA_SLACK_BURST_LIMIT = BURST_LIMIT
    settings.RCA_SLACK_BURST_SECONDS = BURST_SECONDS
    settings.SLACK_WEBHOOK_URL = ""
    settings.RCA_TASK_QUEUES = {"rca.tasks.send_notification": QUEUE}
    # Analysis is not under test here (no session worker): tests/conftest.py turns it off.


@pytest.fixture
def project(slack_server) -> Project:
    project = project_with_key("ml-platform").project
    notify.set_webhook(project, slack_server.url_for(HOOK_PATH))
    return project


def error(n: int = 0) -> dict:
    payload = shape_error(batch=64)
    if n:
        payload |= {"error_type": f"StormError{n}", "message": f"storm failure number {n}"}
        payload["stacktrace"] = payload["stacktrace"].replace("RuntimeError", f"StormError{n}")
    return payload


def new_issue(project: Project, n: int = 0) -> Issue:
    stored = store_incident(project, error(n))
    assert stored.new_issue
    return stored.incident.issue


def suggestion_for(issue: Issue) -> Suggestion:
    incident = issue.incidents.first()
    analysis = Analysis.objects.create(
        incident=incident, issue=issue, status=Analysis.Status.DONE, provider="offline"
    )
    return Suggestion.objects.create(
        analysis=analysis,
        issue=issue,
        incident=incident,
        action="Reshape the input to (batch, 512) before self.head",
        reason="The head expects 512 features but the batch has 256 (64x256 vs 512x10).",
        runbook_slug="linear-layer-shape-mismatch",
        confidence=0.8,
        validation={
            "format_ok": True,
            "grounded": True,
            "stack_path_match": 1.0,
            "shape_incompatibility": 0.5,
            "unknown_dim_share": 0.0,
            "ok": True,
        },
        valid=True,
        provider="offline",
    )


def settled(pk: int, timeout: float = 30) -> Notification:
    return wait_for(
        lambda: (n := Notification.objects.get(pk=pk)).status in ("sent", "failed") and n,
        timeout=timeout,
    )


def blocks_text(payload: dict) -> str:
    return json.dumps(payload["blocks"], ensure_ascii=False)


def test_new_issue_and_its_suggestion_each_post_exactly_once(project, hook, slack_worker):
    issue = new_issue(project)
    first = notify.notify_new_issue(issue.pk)
    assert notify.notify_new_issue(issue.pk).pk == first.pk  # at most once
    assert settled(first.pk).status == "sent", slack_worker.log()[-3000:]

    suggestion = suggestion_for(issue)
    second = notify.notify_suggestion(suggestion.pk)
    assert notify.notify_suggestion(suggestion.pk).pk == second.pk
    assert settled(second.pk).status == "sent"
    time.sleep(0.5)  # room for a duplicate to show up, if there were one

    assert len(hook.posts) == 2
    opened, suggested = hook.payloads()
    assert opened["blocks"][0]["text"]["text"] == "🆕 New issue"
    text = blocks_text(opened)
    assert f"/issues/{issue.pk}|" in text
    for expected in ("ranker", "ranker-v3", "RuntimeError", "*Occurrences*\\n1"):
        assert expected in text
    assert opened["text"].startswith("New issue in Ml-Platform: ")

    assert suggested["blocks"][0]["text"]["text"] == "💡 Suggested fix"
    text = blocks_text(suggested)
    assert "*Suggested action*\\nReshape the input to (batch, 512) before self.head" in text
    assert "*Reason*\\nThe head expects 512 features" in text
    assert "✅ validated" in text and "✅ grounded in runbook" in text
    assert "runbook `linear-layer-shape-mismatch`" in text

    rows = Notification.objects.filter(project=project).order_by("pk")
    assert [(n.kind, n.status, n.attempts) for n in rows] == [
        ("new_issue", "sent", 1),
        ("suggestion", "sent", 1),
    ]
    assert all(n.sent_at and HOOK_PATH not in n.target for n in rows)


def test_new_issue_alert_is_sent_by_ingest_without_waiting_for_analysis(project, hook):
    """The alert is recorded with the incident and sent by the notification task alone:
    no analysis has run (nothing here analyses), and the Slack message still goes out."""
    stored = store_incident(project, shape_error(batch=64))
    assert stored.new_issue
    row = Notification.objects.get(issue_id=stored.incident.issue_id, kind="new_issue")
    assert settled(row.pk).status == "sent"
    assert not Analysis.objects.filter(issue_id=stored.incident.issue_id).exists()
    assert Incident.objects.get(pk=stored.incident.pk).analysis_status == "pending"
    assert [p["blocks"][0]["text"]["text"] for p in hook.payloads()] == ["🆕 New issue"]

    again = store_incident(project, shape_error(batch=64))  # a repeat opens nothing
    assert not again.new_issue
    assert Notification.objects.filter(issue_id=stored.incident.issue_id).count() == 1


def test_a_rolled_back_ingest_records_no_alert(project, hook):
    """The alert is written in the storing transaction: no incident, no notification."""
    from django.db import transaction

    with pytest.raises(RuntimeError), transaction.atomic():
        store_incident(project, shape_error(batch=64))
        raise RuntimeError("the request failed after storing")
    assert not Notification.objects.filter(project=project).exists()
    time.sleep(0.5)  # a message published before commit would be delivered by now
    assert hook.posts == []


def test_regression_is_announced(project, hook):
    issue = new_issue(project)
    Issue.objects.filter(pk=issue.pk).update(status=Issue.Status.RESOLVED)
    again = store_incident(project, shape_error(batch=64))
    assert again.regressed
    n = settled(notify.notify_regression(issue.pk, again.incident.pk).pk)
    assert n.status == "sent"
    assert notify.notify_regression(issue.pk, again.incident.pk).pk == n.pk  # once per event
    opened, regressed = (p["blocks"][0]["text"]["text"] for p in hook.payloads())
    assert "New issue" in opened and "Regression" in regressed

    # Resolved again, and back again: a second regression is news too.
    Issue.objects.filter(pk=issue.pk).update(status=Issue.Status.RESOLVED)
    third = store_incident(project, shape_error(batch=64))
    assert third.regressed
    assert settled(notify.notify_regression(issue.pk, third.incident.pk).pk).status == "sent"
    assert len(hook.payloads()) == 3


def test_rate_limited_message_is_delivered_once_after_retry_after(project, hook):
    hook.script = [(429, "rate_limited", {"Retry-After": "1"}, 0.0)]
    n = settled(notify.notify_new_issue(new_issue(project).pk).pk)

    assert n.status == "sent" and n.attempts == 2
    assert [status for _, _, status in hook.posts] == [429, 200]
    (refused_at, _, _), (delivered_at, _, _) = hook.posts
    assert delivered_at - refused_at >= 1.0
    assert "429" in n.last_error  # the record keeps what went wrong on the way


def test_404_is_tried_exactly_once_and_disables_the_webhook(project, hook):
    hook.script = [(404, "no_service", {}, 0.0)] * 5
    n = settled(notify.notify_new_issue(new_issue(project).pk).pk)
    time.sleep(1.0)  # a retry would have come by now (backoff 0.2 s)

    assert n.status == "failed" and n.attempts == 1
    assert n.last_error == "Slack answered 404 no_service"
    assert len(hook.posts) == 1
    project.refresh_from_db()
    assert project.slack_disabled_at is not None
    assert "no_service" in project.slack_disabled_reason
    # nothing more is queued for a disabled webhook
    assert notify.notify_new_issue(new_issue(project, 1).pk) is None
    # saving the webhook again re-enables it
    notify.set_webhook(project, project.slack_webhook_url)
    assert Project.objects.get(pk=project.pk).slack_disabled_at is None


def test_server_errors_until_attempts_run_out_end_failed_with_the_error(project, hook):
    hook.script = [(500, "", {}, 0.0)] * 10
    n = settled(notify.notify_new_issue(new_issue(project).pk).pk)
    time.sleep(1.0)

    assert n.status == "failed" and n.attempts == MAX_ATTEMPTS
    assert n.last_error == f"Gave up after {MAX_ATTEMPTS} attempts: Slack answered 500"
    assert len(hook.posts) == MAX_ATTEMPTS
    assert Project.objects.get(pk=project.pk).slack_disabled_at is None  # not permanent


def test_timeout_is_retried(project, hook):
    hook.script = [(200, "ok", {}, 2.0)]  # answers only after the 0.5 s timeout
    n = settled(notify.notify_new_issue(new_issue(project).pk).pk)

    assert n.status == "sent" and n.attempts == 2
    assert "No answer from Slack within 0.5s" in n.last_error
    assert len(hook.posts) == 2


def test_burst_of_50_new_issues_is_two_messages_and_one_digest(project, hook):
    stored = store_incidents(project, [error(i) for i in range(1, 51)])  # open at once
    issues = [s.incident.issue for s in stored]
    assert all(s.new_issue for s in stored)
    for issue in issues:  # again: nothing more
        notify.notify_new_issue(issue.pk)

    folded = Notification.objects.filter(kind="new_issue", status="suppressed")
    suppressed = folded.order_by("created_at").first().issue  # listed first in the digest
    later = notify.notify_suggestion(suggestion_for(suppressed).pk)
    assert later.status == "suppressed"  # its issue went into the digest

    digest = wait_for(
        lambda: Notification.objects.filter(kind="digest", status__in=["sent", "failed"]).first(),
        timeout=WINDOW_MINUTES * 60 + 30,
    )
    time.sleep(1.0)
    assert digest.status == "sent"
    counts = {
        (kind, status): Notification.objects.filter(kind=kind, status=status).count()
        for kind, status in Notification.objects.values_list("kind", "status").distinct()
    }
    assert counts == {
        ("new_issue", "sent"): BURST_LIMIT,
        ("new_issue", "suppressed"): 50 - BURST_LIMIT,
        ("digest", "sent"): 1,
        ("suggestion", "suppressed"): 1,
    }
    headers = [p["blocks"][0]["text"]["text"] for p in hook.payloads()]
    assert headers == ["🆕 New issue"] * BURST_LIMIT + [f"🌩️ {50 - BURST_LIMIT} more new issues"]
    listing = blocks_text(hook.payloads()[-1])
    assert f"/issues/{suppressed.pk}|" in listing
    assert f"…and {50 - BURST_LIMIT - 20} more" in listing


def test_disallowed_host_is_refused_when_saving_and_when_sending(project, hook, slack_server):
    elsewhere = slack_server.url_for(HOOK_PATH).replace("127.0.0.1", "localhost")
    with pytest.raises(WebhookURLNotAllowed, match="localhost is not allowed"):
        notify.set_webhook(project, elsewhere)

    # A URL that got in some other way (an older allow-list, SLACK_WEBHOOK_URL) is refused too.
    Project.objects.filter(pk=project.pk).update(slack_webhook_url=elsewhere)
    project.refresh_from_db()
    n = settled(notify.notify_new_issue(new_issue(project).pk).pk)

    assert n.status == "failed" and n.attempts == 1
    assert n.last_error.startswith("Webhook URL refused: ")
    assert hook.posts == []
    assert Project.objects.get(pk=project.pk).slack_disabled_at is not None


def test_test_message_posts_once_and_reports_the_result(project, hook):
    ok, message = notify.send_test_message(project)
    assert ok, message
    assert message == "Test message delivered to 127.0.0.1/…h00k."
    assert len(hook.posts) == 1

    hook.script = [(404, "no_service", {}, 0.0)]
    ok, message = notify.send_test_message(project)
    assert not ok
    assert "404 no_service" in message and "paused" in message
    assert project.slack_disabled_at is not None

    ok, _ = notify.send_test_message(project)  # fixed on Slack's side: a passing test re-enables
    assert ok and Project.objects.get(pk=project.pk).slack_disabled_at is None
    tests = Notification.objects.filter(project=project, kind="test").order_by("pk")
    assert [n.status for n in tests] == ["sent", "failed", "sent"]
    assert len(hook.posts) == 3
