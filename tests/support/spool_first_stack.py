"""A spool-first ingestion stack of real processes for integration tests: an embedded
cluster of its own, gunicorn (two workers, as `make run`) and `manage.py process_inbox`
on demand, plus what the tests read of the spool and the inbox.

Shared by the Sentry-events and the JSON-posts spool-first tests, which differ only in the
settings they turn on.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import requests

from tests.integration.test_spool_outage import SETUP, Served
from tests.support.gunicorn import free_port
from tests.support.processes import python, wait_for
from webapp.supervisor import gunicorn_argv


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


@contextmanager
def spool_first_stack(tmp_path: Path, name: str, settings: dict[str, str]) -> Iterator[dict]:
    """The stack, gunicorn already serving (``start_web`` starts another after a kill;
    ``start_processor`` starts a processor). ``settings`` are the environment the test is
    about; the cluster and every process stop on the way out."""
    data = tmp_path / "data"
    base_env = {"RCA_DATA_DIR": str(data), "SECRET_KEY": f"{name}-" + "x" * 40}
    uri = python(base_env, "-c", "from webapp import embedded; print(embedded.database_url())")
    env = {
        **base_env,
        "DATABASE_URL": uri.strip().splitlines()[-1],
        "CELERY_BROKER_URL": "memory://",  # analyses are not these tests' subject
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "RCA_INBOX_POLL": "0.5",
        "RCA_INGEST_INLINE": "false",
        **settings,
    }
    (tmp_path / "metrics").mkdir()
    started: list[Served] = []
    stack: dict[str, Any] = {}

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

    def start_web() -> Served:
        port = free_port()
        web = Served(
            gunicorn_argv(port, "--log-level", "info"),
            tmp_path / f"web-{len(started)}.log",
            env,
            "Booting worker",
        )
        started.append(web)
        web.wait_ready()
        wait_for(lambda: _answers(f"http://127.0.0.1:{port}/healthz"), 30)
        stack.update(url=f"http://127.0.0.1:{port}", web=web)
        return web

    try:
        python(env, "manage.py", "migrate", "--no-input", "-v", "0")
        ids = json.loads(python(env, "manage.py", "shell", "-c", SETUP).strip().splitlines()[-1])
        stack.update(
            ids,
            uri=env["DATABASE_URL"],
            spool=data / "spool",
            start_processor=start_processor,
            start_web=start_web,
        )
        start_web()
        yield stack
    finally:
        for proc in started:
            proc.stop()
        python(base_env, "-c", "from webapp import embedded; embedded.stop()")


def inbox_rows(uri: str) -> int:
    with psycopg.connect(uri) as conn:
        row = conn.execute("SELECT count(*) FROM ingest_inboxitem").fetchone()
    return int(row[0]) if row else 0


def spooled(spool: Path) -> int:
    """Lines waiting in the spool files."""
    return sum(f.read_bytes().count(b"\n") for f in spool.glob("*.spool"))


def kill_group(proc: Served) -> None:
    """SIGKILL the process and its children (gunicorn's workers): no cleanup of any kind."""
    pid = proc.proc.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    for p in [pid, *map(int, children)]:
        os.kill(p, signal.SIGKILL)
