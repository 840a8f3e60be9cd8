"""The current @sentry/node (pinned in tests/node/package.json) reports an error to a live
gunicorn; its transport sends the envelope chunked, and the incident is found by the id
the SDK returned."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

from ingest.models import Incident
from ingest.sentry.auth import build_dsn
from tests.support.factories import project_with_key
from tests.support.gunicorn import Gunicorn
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
NODE_DIR = Path(__file__).resolve().parents[1] / "node"


@pytest.fixture(scope="module")
def node_sdk() -> Path:
    """`npm ci` from the lock file when node_modules is missing (a fresh clone, CI)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to run @sentry/node (install Node.js >= 20.19)")
    if not (NODE_DIR / "node_modules" / "@sentry" / "node").is_dir():
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
    return NODE_DIR


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Gunicorn]:
    with django_db_blocker.unblock():
        db = dict(connection.settings_dict)
    gunicorn = Gunicorn(
        db,
        tmp_path_factory.mktemp("gunicorn") / "web.log",
        "--access-logfile",
        "-",
        "--access-logformat",
        "ACCESS %(r)s %(s)s te=%({transfer-encoding}i)s cl=%({content-length}i)s",
    )
    try:
        gunicorn.wait_ready()
        yield gunicorn
    finally:
        gunicorn.stop()


def test_capture_exception_from_current_node_sdk_becomes_an_incident(node_sdk, server):
    tenant = project_with_key("node-gateway")
    dsn = build_dsn(tenant.project.sentry_key, f"127.0.0.1:{server.port}", tenant.project.pk)
    done = subprocess.run(
        ["node", "capture.mjs", dsn, "model weights not found"],
        cwd=node_sdk,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    assert printed["flushed"] is True
    event_id = printed["eventId"].replace("-", "").lower()

    incident = wait_for(
        lambda: Incident.objects.filter(project=tenant.project, event_id=event_id).first(),
        timeout=15,
    )
    assert incident.source == "sentry"
    assert incident.error_type == "Error"
    assert incident.message.startswith("model weights not found: /models/ranker-v3.onnx")
    assert incident.environment == "staging"
    assert any(frame.get("function") == "loadModel" for frame in incident.frames)
    envelope_lines = [line for line in server.log().splitlines() if "ACCESS POST /api/" in line]
    assert any("te=chunked" in line and " 200 " in line for line in envelope_lines), envelope_lines
