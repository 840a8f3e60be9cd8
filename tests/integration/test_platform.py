"""The platform: tasks cross a real broker to a real worker process; probes tell the truth."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from celery import Celery

from tests.support.processes import REPO, Worker, wait_for
from webapp.models import WorkerHeartbeat

REDIS_URL = "redis://127.0.0.1:6379/15"


def _get_json(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _redis_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.django_db(transaction=True)
def test_task_sent_through_embedded_broker_runs_in_worker_process(celery_worker):
    from webapp.tasks import heartbeat

    WorkerHeartbeat.objects.all().delete()
    heartbeat.delay()
    beat = wait_for(
        lambda: WorkerHeartbeat.objects.filter(
            hostname__startswith=celery_worker.hostname_prefix
        ).first()
    )
    assert beat.hostname.startswith(celery_worker.name)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not _redis_reachable(), reason="no Redis on 127.0.0.1:6379")
def test_task_sent_through_redis_runs_in_worker_process(tmp_path):
    from django.db import connection

    queue = f"redis-test-{tmp_path.name}"
    worker = Worker(dict(connection.settings_dict), REDIS_URL, tmp_path, queues=queue)
    try:
        worker.wait_ready()
        WorkerHeartbeat.objects.all().delete()
        sender = Celery("sender", broker=REDIS_URL, set_as_current=False)  # keep the app current
        sender.send_task("webapp.tasks.heartbeat", queue=queue)
        wait_for(
            lambda: WorkerHeartbeat.objects.filter(
                hostname__startswith=worker.hostname_prefix
            ).exists()
        )
        assert re.search(r"Connected to redis://\S*127\.0\.0\.1:6379/15", worker.log())
    finally:
        worker.stop()


def test_healthz_answers_without_touching_anything(live_server):
    status, body = _get_json(f"{live_server.url}/healthz")
    assert (status, body) == (200, {"status": "ok"})


def test_readyz_reports_database_broker_and_worker(live_server, celery_worker):
    def ready():
        status, body = _get_json(f"{live_server.url}/readyz")
        return body if status == 200 else None

    body = wait_for(ready, timeout=30, interval=0.5)
    assert body["status"] == "ok"
    assert {name: c["ok"] for name, c in body["checks"].items()} == {
        "database": True,
        "broker": True,
        "worker": True,
    }


def test_web_process_never_imports_torch_or_sentence_transformers():
    code = (
        "import json, sys, django.urls as u; import webapp.wsgi;"
        "from django.conf import settings; u.get_resolver().url_patterns;"
        "print(json.dumps([m for m in ('torch', 'sentence_transformers', 'transformers')"
        " if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="apt docker-compose missing")
def test_compose_file_is_valid():
    result = subprocess.run(
        ["docker-compose", "-f", str(Path(REPO) / "docker-compose.yml"), "config", "-q"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
