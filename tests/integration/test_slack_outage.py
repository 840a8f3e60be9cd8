"""A Slack that hangs holds Slack messages only: new failures are analysed all the same.

Two of `make run`'s workers: the general one on every queue (with no notify worker running,
it sends the Slack messages itself) and the one on the fresh queue only. They run on queues
of this test's own (so the session's worker cannot take their messages), routed by the
product's own table, `RCA_TASK_QUEUES`, with each queue renamed: if that table put Slack
messages on the fresh queue again, both workers would sit in hung sends and the last error
would never be analysed.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from django.db import connection
from werkzeug import Request, Response

from ingest.models import Incident, Project
from ingest.store import store_incidents
from rca import notify
from rca.models import Notification
from tests.support.corpus import store_embedded_runbooks
from tests.support.factories import project_with_key, shape_error
from tests.support.processes import Worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.queues_analyses]

HOOK_PATH = "/services/T0/B0/hangs"
SUFFIX = uuid.uuid4().hex[:8]
QUEUE_SETTINGS = (
    "RCA_QUEUE_FRESH",
    "RCA_QUEUE_REPEAT",
    "RCA_QUEUE_HOUSEKEEPING",
    "RCA_QUEUE_NOTIFY",
)


class HangingSlack:
    """An incoming webhook that accepts the connection and answers nothing until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.received = 0
        self.answered = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        with self.lock:
            self.received += 1
        self.release.wait(300)
        with self.lock:
            self.answered += 1
        return Response("ok", content_type="text/plain")


@pytest.fixture
def routing(settings) -> dict[str, str]:
    """This test's queues in place of the product's, in this process and for its workers."""
    renamed = {"celery": f"celery-{SUFFIX}"}
    env = {}
    for name in QUEUE_SETTINGS:
        queue = getattr(settings, name)
        renamed[queue] = f"{queue}-{SUFFIX}"
        setattr(settings, name, renamed[queue])
        env[name] = renamed[queue]
    tasks = {task: renamed[queue] for task, queue in settings.RCA_TASK_QUEUES.items()}
    settings.RCA_TASK_QUEUES = tasks
    env["RCA_TASK_QUEUES"] = ",".join(f"{task}={queue}" for task, queue in tasks.items())
    env["RCA_SLACK_TIMEOUT"] = "600"  # a send waits as long as Slack does
    env["QUEUES"] = ",".join(renamed.values())
    return env


@pytest.fixture
def workers(routing, broker_url, tmp_path):
    """`make run`'s two workers: general (every queue) and fresh (the fresh queue only)."""
    db = dict(connection.settings_dict)
    env = {k: v for k, v in routing.items() if k != "QUEUES"}
    general = Worker(db, broker_url, tmp_path, queues=routing["QUEUES"], extra_env=env)
    fresh = Worker(db, broker_url, tmp_path, queues=routing["RCA_QUEUE_FRESH"], extra_env=env)
    try:
        general.wait_ready(180)  # two workers start at once on a shared machine
        fresh.wait_ready(180)
        yield general, fresh
    finally:
        general.stop()
        fresh.stop()


@pytest.fixture
def slack(slack_server, settings, workers) -> Any:
    """Released before the workers stop, so none is left in a hung send."""
    settings.RCA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.SLACK_WEBHOOK_URL = ""
    settings.RCA_SLACK_BURST_LIMIT = 10  # three new issues at once: each announced
    settings.RCA_SLACK_DIGEST_THRESHOLD = 10
    settings.RCA_PUBLISH_IN_BACKGROUND = False
    slack_server.clear()
    hook = HangingSlack()
    slack_server.expect_request(HOOK_PATH, method="POST").respond_with_handler(hook)
    yield hook
    hook.release.set()


def new_error(kind: int) -> dict[str, Any]:
    payload = shape_error(batch=4)
    payload["stacktrace"] = payload["stacktrace"].replace("model.py", f"model_{kind}.py")
    return payload


def test_new_errors_are_analysed_while_slack_hangs(workers, slack, slack_server) -> None:
    store_embedded_runbooks()
    project: Project = project_with_key("hangs").project
    notify.set_webhook(project, slack_server.url_for(HOOK_PATH))

    def store(kind: int) -> int:
        """One transaction each: its analysis is queued, then its Slack message."""
        [stored] = store_incidents(project, [new_error(kind)])
        assert stored.new_issue
        return stored.incident.pk

    first = store(0)
    wait_for(lambda: slack.received >= 1, timeout=120, interval=0.1)  # a send now hangs
    ids = [first, store(1), store(2)]

    def analysed() -> bool:
        done = Incident.objects.filter(pk__in=ids, analysis_status="done").count()
        return done == len(ids)

    general, fresh = workers
    wait_for(analysed, timeout=180, interval=0.2)
    # Every analysis finished while Slack had not answered once: none waited on it.
    assert slack.answered == 0, general.log()[-3000:]
    assert not Notification.objects.filter(project=project, status="sent").exists()
    assert "succeeded" in fresh.log()

    slack.release.set()  # Slack is back: nothing was lost, each message goes out once
    expected = {("new_issue", "sent"): 3, ("suggestion", "sent"): 3}

    def delivered() -> bool:
        rows = Notification.objects.filter(project=project).values_list("kind", "status")
        return sorted(rows) == sorted(k for k, n in expected.items() for _ in range(n))

    wait_for(delivered, timeout=120, interval=0.3)
    assert slack.answered == slack.received
