"""Slack during a storm: repeats send nothing, a burst of new issues is folded, and a new
failure that turns up while the storm runs is announced on its own, with its suggestion.

The session's real worker (tests/conftest.py) analyses and sends, like `make run`'s
general worker; the channel is a local server speaking Slack's incoming-webhook protocol.
The rule is in rca/notify/__init__.py.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from typing import Any

import pytest
from werkzeug import Request, Response

from ingest.models import Incident, Issue, Project
from ingest.store import store_incidents
from rca import notify
from rca.models import Notification, Suggestion
from tests.support.corpus import store_embedded_runbooks
from tests.support.factories import project_with_key, shape_error
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

HOOK_PATH = "/services/T0/B0/storm"
ISSUES = 6  # new at once: a burst
PER_ISSUE = 40  # occurrences of each: repeats
BURST_LIMIT = 2
BURST_SECONDS = 1.0
THRESHOLD = 3  # in the window: the burst's 2, the first new error; the second is folded
WINDOW_MINUTES = 0.25  # the digest goes out 15 s after the burst


@pytest.fixture(autouse=True)
def _storm_settings(transactional_db, settings):
    """Ingest runs here, so the digest decisions are made with these settings."""
    store_embedded_runbooks()
    settings.RCA_PUBLISH_IN_BACKGROUND = False  # published at commit, in storing order
    settings.RCA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.SLACK_WEBHOOK_URL = ""
    settings.RCA_SLACK_BURST_LIMIT = BURST_LIMIT
    settings.RCA_SLACK_BURST_SECONDS = BURST_SECONDS
    settings.RCA_SLACK_DIGEST_THRESHOLD = THRESHOLD
    settings.RCA_SLACK_DIGEST_WINDOW_MINUTES = WINDOW_MINUTES


class Channel:
    """Every message the webhook received, in order."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        with self.lock:
            self.messages.append(json.loads(request.data))
        return Response("ok", content_type="text/plain")

    def naming(self, issue: Issue) -> list[str]:
        """The headers of the messages that link `issue`."""
        link = f"/issues/{issue.pk}|"
        with self.lock:
            return [
                m["blocks"][0]["text"]["text"]
                for m in self.messages
                if link in json.dumps(m["blocks"], ensure_ascii=False)
            ]


@pytest.fixture
def channel(slack_server) -> Channel:
    slack_server.clear()
    channel = Channel()
    slack_server.expect_request(HOOK_PATH, method="POST").respond_with_handler(channel)
    return channel


@pytest.fixture
def project(slack_server) -> Project:
    project = project_with_key("fleet").project
    notify.set_webhook(project, slack_server.url_for(HOOK_PATH))
    return project


def occurrence(kind: int) -> dict[str, Any]:
    payload = shape_error(batch=4)
    payload["stacktrace"] = payload["stacktrace"].replace("model.py", f"model_{kind}.py")
    return payload


def new_error(error_type: str) -> dict[str, Any]:
    """A failure the storm never had: its own error type and frames."""
    message = "index out of range in self"
    return {
        "service": "tokenizer",
        "environment": "prod",
        "error_type": error_type,
        "message": message,
        "stacktrace": (
            "Traceback (most recent call last):\n"
            '  File "/srv/tokenizer/embed.py", line 17, in encode\n'
            "    return self.embeddings(ids)\n"
            '  File "/usr/lib/python3.11/site-packages/torch/nn/functional.py", line 2264,'
            " in embedding\n"
            "    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)\n"
            f"{error_type}: {message}"
        ),
    }


def store_after_the_burst(project: Project, payload: dict[str, Any], since: float) -> Incident:
    """Store `payload` once BURST_SECONDS have passed since `since`, when the issues before
    it had opened (their `first_seen`: the rule reads nothing else of them)."""
    time.sleep(max(0.0, since + BURST_SECONDS + 0.1 - time.monotonic()))
    [stored] = store_incidents(project, [payload])
    assert stored.new_issue
    return stored.incident


def unfinished(project: Project) -> int:
    waiting = [Incident.Analysis.PENDING, Incident.Analysis.ANALYZING]
    return Incident.objects.filter(project=project, analysis_status__in=waiting).count()


def test_a_new_error_during_a_storm_is_announced_alone_with_its_suggestion(
    project, channel, celery_worker
) -> None:
    payloads = [occurrence(kind) for _ in range(PER_ISSUE) for kind in range(ISSUES)]
    store_incidents(project, payloads[:100])  # all six issues open here: one burst
    burst_at = time.monotonic()  # they opened (first_seen) before this
    storm = list(Issue.objects.filter(project=project).order_by("pk"))
    assert len(storm) == ISSUES
    for start in range(100, len(payloads), 100):  # repeats of them while it lasts
        store_incidents(project, payloads[start : start + 100])
    new = store_after_the_burst(project, new_error("IndexError"), burst_at)
    later = store_after_the_burst(project, new_error("KeyError"), time.monotonic())

    suggestion = wait_for(
        lambda: Suggestion.objects.filter(issue_id=new.issue_id).first(), timeout=120
    )
    wait_for(lambda: len(channel.naming(new.issue)) >= 2, timeout=60, interval=0.2)
    digest = wait_for(
        lambda: Notification.objects.filter(kind="digest", status__in=["sent", "failed"]).first(),
        timeout=WINDOW_MINUTES * 60 + 60,
    )
    wait_for(lambda: unfinished(project) == 0, timeout=120, interval=0.3)
    time.sleep(1.0)  # room for a message that should not come
    log = celery_worker.log()[-3000:]

    # The new error: "New issue" then its analysis, its own: the suggested fix with the
    # action in it, or (the calibrated confidence's call, tested elsewhere) the abstention.
    outcome = "🤔 No confident suggestion" if suggestion.abstained else "💡 Suggested fix"
    assert channel.naming(new.issue) == ["🆕 New issue", outcome], log
    if not suggestion.abstained:
        [fix] = [
            json.dumps(m["blocks"], ensure_ascii=False)
            for m in channel.messages
            if m["text"].startswith("Suggested fix") and f"/issues/{new.issue_id}|" in json.dumps(m)
        ]
        assert suggestion.action[:40] in fix
    # The burst: two announced on their own (with suggestions), the other four in one digest.
    assert digest.status == "sent", log
    fates = sorted(tuple(channel.naming(issue)) for issue in storm)
    assert fates == sorted(
        [("🆕 New issue", "💡 Suggested fix")] * BURST_LIMIT
        + [(f"🌩️ {ISSUES - BURST_LIMIT + 1} more new issues",)] * (ISSUES - BURST_LIMIT)
    )
    # The window's bound: a second new error, THRESHOLD announcements later, is folded too.
    assert channel.naming(Issue.objects.get(pk=later.issue_id)) == [
        f"🌩️ {ISSUES - BURST_LIMIT + 1} more new issues"
    ]
    # Repeats: every occurrence stored and counted on its issue, not one message of their own.
    counts = Issue.objects.filter(pk__in=[i.pk for i in storm]).values_list(
        "occurrence_count", flat=True
    )
    assert list(counts) == [PER_ISSUE] * ISSUES
    rows = Notification.objects.filter(project=project).values_list("kind", "status")
    assert Counter(rows) == {
        ("new_issue", "sent"): BURST_LIMIT + 1,
        ("new_issue", "suppressed"): ISSUES - BURST_LIMIT + 1,
        ("suggestion", "sent"): BURST_LIMIT + 1,
        ("suggestion", "suppressed"): ISSUES - BURST_LIMIT + 1,
        ("digest", "sent"): 1,
    }
