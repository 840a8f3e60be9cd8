"""Sentry events spooled first (RCA_SENTRY_SPOOL_FIRST, ingest/inbox/spool_first.py), with
real processes: gunicorn (two workers, as `make run`) and `manage.py process_inbox`.

The web writes nothing to the database for them: they wait in the spool, invisible, and
the processor stores them from there. A processor killed with SIGKILL mid-drain, and the
web server killed with SIGKILL after answering, lose nothing and store nothing twice; a
retry of a spooled event is stored once; the inbox's bound counts spooled events.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
import requests

from tests.integration.test_spool_outage import SETUP, Served, post_envelope, stored
from tests.support.gunicorn import free_port
from tests.support.processes import python, wait_for
from webapp.supervisor import gunicorn_argv

pytestmark = pytest.mark.timeout(300)


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


@pytest.fixture
def stack(tmp_path):
    """A cluster of its own; gunicorn spooling Sentry events first; no processor yet
    (`start_processor` starts one)."""
    data = tmp_path / "data"
    base_env = {"RCA_DATA_DIR": str(data), "SECRET_KEY": "spool-first-" + "x" * 40}
    uri = python(base_env, "-c", "from webapp import embedded; print(embedded.database_url())")
    env = {
        **base_env,
        "DATABASE_URL": uri.strip().splitlines()[-1],
        "CELERY_BROKER_URL": "memory://",  # analyses are not this test's subject
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "RCA_INBOX_POLL": "0.5",
        "RCA_INGEST_INLINE": "false",
        "RCA_SENTRY_SPOOL_FIRST": "true",
        "RCA_INBOX_MAX_ROWS": "60",
        "RCA_INBOX_BOUND_CHECK_MS": "0",
    }
    (tmp_path / "metrics").mkdir()
    started: list[Served] = []

    def start_processor(*args: str) -> Served:
        proc = Served(
            [sys.executable, "manage.py", "process_inbox", *args],
            tmp_path / f"processor-{len(started)}.log",
            env,
            "processing the inbox",
        )
        started.append(proc)
        proc.wait_ready()
        return proc

    try:
        python(env, "manage.py", "migrate", "--no-input", "-v", "0")
        ids = json.loads(python(env, "manage.py", "shell", "-c", SETUP).strip().splitlines()[-1])
        port = free_port()
        web = Served(
            gunicorn_argv(port, "--log-level", "info"), tmp_path / "web.log", env, "Booting worker"
        )
        started.append(web)
        web.wait_ready()
        wait_for(lambda: _answers(f"http://127.0.0.1:{port}/healthz"), 30)
        yield {
            **ids,
            "url": f"http://127.0.0.1:{port}",
            "uri": env["DATABASE_URL"],
            "spool": data / "spool",
            "web": web,
            "start_processor": start_processor,
        }
    finally:
        for proc in started:
            proc.stop()
        python(base_env, "-c", "from webapp import embedded; embedded.stop()")


def _inbox_rows(uri: str) -> int:
    with psycopg.connect(uri) as conn:
        row = conn.execute("SELECT count(*) FROM ingest_inboxitem").fetchone()
    return int(row[0]) if row else 0


def _spooled(spool: Path) -> int:
    return sum(f.read_bytes().count(b"\n") for f in spool.glob("*.spool"))


def _kill_group(proc: Served) -> None:
    """SIGKILL the process and its children (gunicorn's workers): no cleanup of any kind."""
    pid = proc.proc.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    for p in [pid, *map(int, children)]:
        os.kill(p, signal.SIGKILL)
    proc.proc.wait(10)


def test_spooled_events_survive_sigkill_of_web_and_processor_and_are_stored_once(stack):
    event_ids = [uuid.uuid4().hex for _ in range(40)]
    with ThreadPoolExecutor(8) as pool:  # concurrent: appends share fdatasyncs
        answers = list(pool.map(lambda e: post_envelope(stack, e), event_ids))
    assert [a.status_code for a in answers] == [200] * 40, answers[0].text[:300]
    assert [a.json()["id"] for a in answers] == event_ids
    retried = post_envelope(stack, event_ids[0])  # a client's retry: answered as the first
    assert retried.status_code == 200 and retried.json()["id"] == event_ids[0]

    # Nothing was written to the database: no inbox row, nothing stored or visible yet.
    assert _inbox_rows(stack["uri"]) == 0
    assert stored(stack["uri"], event_ids) == {}
    assert _spooled(stack["spool"]) == 41
    _kill_group(stack["web"])  # after its answers: what it acknowledged is in the files

    first = stack["start_processor"]("--batch", "3")  # a transaction per 3 records
    wait_for(lambda: len(stored(stack["uri"], event_ids)) >= 3, 60, 0.01)
    first.proc.kill()  # mid-drain, very likely inside a transaction
    first.proc.wait(10)
    stack["start_processor"]("--batch", "7")

    def all_stored() -> dict[str, int] | None:
        found = stored(stack["uri"], event_ids)
        return found if len(found) == len(event_ids) else None

    found = wait_for(all_stored, 60, 0.2)
    assert set(found.values()) == {1}  # exactly once each, the retry included
    wait_for(lambda: not list(stack["spool"].glob("*.spool")), 30, 0.2)
    assert _inbox_rows(stack["uri"]) == 0


def test_spooled_events_count_toward_the_inbox_bound(stack):
    """No processor: the spool grows; past RCA_INBOX_MAX_ROWS (60 here) the endpoint
    answers 429 with Retry-After and spools nothing more."""
    answers = [post_envelope(stack, uuid.uuid4().hex) for _ in range(61)]
    assert [a.status_code for a in answers] == [200] * 61
    refused = post_envelope(stack, uuid.uuid4().hex)
    assert refused.status_code == 429, refused.text[:300]
    assert int(refused.headers["Retry-After"]) > 0
    assert _spooled(stack["spool"]) == 61
    stack["start_processor"]()
    wait_for(lambda: not list(stack["spool"].glob("*.spool")), 60, 0.2)
    assert post_envelope(stack, uuid.uuid4().hex).status_code == 200
