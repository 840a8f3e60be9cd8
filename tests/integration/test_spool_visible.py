"""A spool that is not empty is visible: /metrics counts what every process spooled and
replayed and reads the spool's size, and the timeline says incidents are waiting in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from ingest import metrics, spool
from tests.integration.test_metrics import parse, value
from tests.support.factories import project_with_key
from tests.support.ui import member

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]

IN_A_PROCESS = """
import sys
from django.conf import settings
settings.configure(RCA_SPOOL_DIR=sys.argv[1], RCA_SPOOL_MAX_BYTES=10**9)
from ingest import spool
if sys.argv[2] == "replay":
    print(spool.replay(lambda records: None))
else:
    n = int(sys.argv[2])
    spool.append([{"event_id": f"{sys.argv[3]}-{i}", "payload": {"i": i}} for i in range(n)])
"""


def in_a_process(metrics_dir: Path, spool_dir: Path, *args: str) -> str:
    """A process of its own, as each gunicorn worker and the inbox processor are."""
    env = {"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", IN_A_PROCESS, str(spool_dir), *args],
        env=env,
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_spooled_and_replayed_are_counted_across_processes_and_the_size_is_read(tmp_path, settings):
    metrics_dir = metrics.reset_dir(tmp_path / "metrics")
    settings.RCA_SPOOL_DIR = str(tmp_path / "spool")
    in_a_process(metrics_dir, tmp_path / "spool", "2", "web-1")
    in_a_process(metrics_dir, tmp_path / "spool", "3", "web-2")

    during = parse(metrics.render(str(metrics_dir))[0].decode())
    assert value(during, "rootcause_spooled_incidents_total") == 5
    assert value(during, "rootcause_spool_records") == 5
    on_disk = sum(p.stat().st_size for p in (tmp_path / "spool").glob("*.spool"))
    assert value(during, "rootcause_spool_bytes") == on_disk > 0
    assert value(during, "rootcause_replayed_incidents_total") == 0

    assert in_a_process(metrics_dir, tmp_path / "spool", "replay").strip() == "5"
    after = parse(metrics.render(str(metrics_dir))[0].decode())
    assert value(after, "rootcause_replayed_incidents_total") == 5
    assert value(after, "rootcause_spool_records") == value(after, "rootcause_spool_bytes") == 0


BANNER = "accepted while the database was away"


def test_the_timeline_says_incidents_wait_in_the_spool_until_it_is_replayed(tmp_path, settings):
    settings.RCA_SPOOL_DIR = str(tmp_path / "spool")
    settings.RCA_SPOOL_FIRST = False  # only an outage spools then
    alice = Client()
    alice.force_login(member(project_with_key("ml-platform").project, "alice"))
    assert BANNER not in alice.get("/").content.decode()

    spool.append([{"event_id": f"e{i}", "payload": {}} for i in range(3)])
    page = alice.get("/").content.decode()
    assert f"3 incidents {BANNER} are waiting in the spool" in page
    fragment = alice.get("/?range=24h", HTTP_HX_REQUEST="true").content.decode()
    assert BANNER in fragment  # the results fragment that filters refresh carries it too

    assert spool.replay(lambda records: None) == 3
    assert BANNER not in alice.get("/").content.decode()
    assert spool.size_bytes() == 0


def test_with_sentry_spool_first_the_spool_is_a_queue_not_an_outage(tmp_path, settings):
    """Spool-first Sentry events wait in the spool while the database is up: the timeline
    counts them without claiming an outage."""
    settings.RCA_SPOOL_DIR = str(tmp_path / "spool")
    settings.RCA_SPOOL_FIRST = False
    settings.RCA_SENTRY_SPOOL_FIRST = True  # the older, Sentry-only setting
    alice = Client()
    alice.force_login(member(project_with_key("ml-platform").project, "alice"))
    spool.append([{"event_id": f"s{i}", "payload": {}} for i in range(2)])
    page = alice.get("/").content.decode()
    assert "2 accepted incidents are waiting in the spool" in page
    assert BANNER not in page
    assert spool.replay(lambda records: None) == 2
    assert "waiting in the spool" not in alice.get("/").content.decode()
