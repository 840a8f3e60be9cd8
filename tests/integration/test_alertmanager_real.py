"""A real Alertmanager (Debian's prometheus-alertmanager, when installed) delivering to the
live server with the README's receiver: its own payloads, re-sends and resolves."""

from __future__ import annotations

import shutil
import socket
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
import yaml

from ingest.models import Incident, Issue
from tests.support.factories import project_with_key
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

README = Path(__file__).resolve().parents[2] / "README.md"
BINARY = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
AMTOOL = shutil.which("amtool")


def readme_receiver() -> dict:
    """The `alertmanager.yml` block of the README, as a user would copy it."""
    text = README.read_text()
    start = text.index("# alertmanager.yml")
    return yaml.safe_load(text[start : text.index("```", start)])


def test_the_readme_receiver_posts_to_the_webhook_with_the_key() -> None:
    config = readme_receiver()
    [receiver] = config["receivers"]
    [hook] = receiver["webhook_configs"]
    assert hook["url"].endswith("/api/v1/alertmanager") and hook["send_resolved"] is True
    assert hook["http_config"]["authorization"]["type"] == "Bearer"
    assert config["route"]["receiver"] == receiver["name"]


@pytest.mark.skipif(AMTOOL is None, reason="amtool (Debian: prometheus-alertmanager) absent")
def test_amtool_accepts_the_readme_receiver(tmp_path) -> None:
    path = tmp_path / "alertmanager.yml"
    path.write_text(yaml.safe_dump(readme_receiver()))
    done = subprocess.run([AMTOOL, "check-config", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def alertmanager(live_server, tmp_path):
    if BINARY is None:
        pytest.skip("Alertmanager (Debian: prometheus-alertmanager) absent")
    tenant = project_with_key("am-real")
    config = readme_receiver()
    hook = config["receivers"][0]["webhook_configs"][0]
    hook["url"] = f"{live_server.url}/api/v1/alertmanager"
    hook["http_config"]["authorization"]["credentials"] = tenant.key
    config["route"].update(group_wait="0s", group_interval="1s", repeat_interval="1m")
    (tmp_path / "am.yml").write_text(yaml.safe_dump(config))
    port = _free_port()
    proc = subprocess.Popen(
        [
            BINARY,
            f"--config.file={tmp_path / 'am.yml'}",
            f"--storage.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "am.log").open("w"),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _ready(url), timeout=30, interval=0.2)
        yield tenant, url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _ready(url: str) -> bool:
    try:
        return requests.get(f"{url}/-/ready", timeout=1).ok
    except requests.RequestException:
        return False


def test_a_real_alertmanager_fires_and_resolves_an_issue(alertmanager):
    tenant, url = alertmanager
    starts = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    alert = {
        "labels": {"alertname": "ModelP99LatencyHigh", "job": "vllm", "severity": "page"},
        "annotations": {"summary": "P99 latency of vllm is 3.1 s"},
        "startsAt": starts.isoformat(),
        "generatorURL": "http://prometheus:9090/graph",
    }
    assert requests.post(f"{url}/api/v2/alerts", json=[alert], timeout=5).ok
    incident = wait_for(
        lambda: Incident.objects.filter(project=tenant.project).first(), timeout=30, interval=0.2
    )
    assert (incident.service, incident.error_type) == ("vllm", "ModelP99LatencyHigh")
    assert incident.message == "P99 latency of vllm is 3.1 s"
    assert incident.occurred_at == starts

    ended = {**alert, "endsAt": (datetime.now(UTC) - timedelta(seconds=1)).isoformat()}
    assert requests.post(f"{url}/api/v2/alerts", json=[ended], timeout=5).ok
    wait_for(
        lambda: Issue.objects.get(pk=incident.issue_id).status == "resolved",
        timeout=30,
        interval=0.2,
    )
    assert Incident.objects.filter(project=tenant.project).count() == 1  # a resolve adds none
