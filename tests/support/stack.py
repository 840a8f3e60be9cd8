"""`manage.py run` (what `make run` executes) as a test drives it: its processes, its
port, its probes. Shared by the tests that start the whole stack (test_make_run, test_faults,
test_beat_after_database_restart).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import psutil

from tests.support.corpus import session_embedding_cache
from tests.support.gunicorn import free_port
from tests.support.processes import REPO, wait_for
from webapp import embedded

__all__ = [
    "Stack",
    "alive",
    "free_port",
    "get_json",
    "ours",
    "post_new_error",
    "supervised",
    "unanalysed",
]


def alive(proc: psutil.Process) -> bool:
    """Running and not a zombie waiting to be reaped."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def ours(data_dir: str, port: int) -> list[psutil.Process]:
    """Every process `make run` started: postgres on our data dir, worker and its beat and
    pool, web on our port."""
    found = []
    for proc in psutil.process_iter(["cmdline", "environ", "status"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or [])
            env = proc.info["environ"] or {}
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue  # dead, waiting for init to reap it
        if data_dir in cmd or f"127.0.0.1:{port}" in cmd or env.get("RCA_DATA_DIR") == data_dir:
            found.append(proc)
    return found


def supervised(root_pid: int, *words: str) -> psutil.Process | None:
    """A live child of the supervisor (`manage.py run`, `root_pid` itself or below it)
    whose command line holds every one of `words`: `supervised(pid, "celery", "-B")` is
    the Celery main process that runs beat, `supervised(pid, "gunicorn")` the web master."""
    try:
        root = psutil.Process(root_pid)
        family = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return None
    for proc in family:
        try:
            cmd = " ".join(proc.cmdline())
            if all(w in cmd for w in words) and "manage.py" in " ".join(proc.parent().cmdline()):
                return proc
        except psutil.Error:
            continue
    return None


def get_json(url: str, headers: dict[str, str] | None = None, timeout: float = 10) -> dict:
    """GET `url` and return its JSON body; raises on anything but 200."""
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 - our own server
        assert resp.status == 200
        return json.loads(resp.read())


class Stack:
    """`manage.py run` on its own data dir and port, its output in a file; zero
    configuration as on a fresh clone (embedded database and broker, offline LLM), plus
    `extra_env`."""

    def __init__(self, tmp: Path, extra_env: dict[str, str] | None = None) -> None:
        self.data_dir, self.port = tmp / "data", free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # What `make run` gets on a fresh clone: no test-run switches (RCA_INGEST_INLINE).
        unset = ("DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY", "OPENAI_API_KEY")
        unset += ("RCA_INGEST_INLINE",)
        env = {k: v for k, v in os.environ.items() if k not in unset}
        env.update(
            RCA_DATA_DIR=str(self.data_dir),
            PORT=str(self.port),
            RCA_DEMO="0",
            # The corpus vectors this test run already computed: no minute of embedding.
            RCA_EMBEDDING_CACHE=str(session_embedding_cache()),
            **(extra_env or {}),
        )
        self.log_path = tmp / "run.log"
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "run"],
            cwd=REPO,
            env=env,
            stdout=self.log_path.open("wb"),
            stderr=subprocess.STDOUT,
        )
        self.seen: dict[int, psutil.Process] = {}  # every process of the stack we met

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self) -> str:
        """The API key from the banner, once `make run` says it is ready."""
        wait_for(lambda: "Rootcause is ready" in self.log() or self.proc.poll() is not None, 300)
        key = re.search(r"API key: (rc_\S+)", self.log())
        assert key, self.log()[-4000:]
        return key.group(1)

    def remember(self) -> None:
        for proc in ours(str(self.data_dir), self.port):
            self.seen.setdefault(proc.pid, proc)

    def postmaster(self) -> psutil.Process | None:
        pid = embedded.postmaster_pid(self.data_dir / "pg")
        return psutil.Process(pid) if pid else None

    def victims(self) -> dict[str, Callable[[], psutil.Process | None]]:
        """Its processes by role: the Celery main process with beat, the gunicorn master,
        the postmaster, the inbox processor (None until it runs)."""
        pid = self.proc.pid
        return {
            "worker": lambda: supervised(pid, "celery", " -B "),
            "web": lambda: supervised(pid, "gunicorn"),
            "postgres": self.postmaster,
            "inbox": lambda: supervised(pid, "process_inbox"),
        }

    def healthz(self) -> bool:
        try:
            return get_json(f"{self.base}/healthz", timeout=2) == {"status": "ok"}
        except (OSError, AssertionError, ValueError):
            return False

    def ready(self) -> bool:
        try:
            return get_json(f"{self.base}/readyz", timeout=5)["status"] == "ok"
        except (OSError, AssertionError, ValueError):
            return False


def post_new_error(stack: Stack, key: str) -> str:
    """POST one incident of a failure never seen before (its own issue); its event id."""
    event_id = uuid.uuid4().hex
    body = {
        "service": "probe",
        "error_type": f"ProbeError{event_id[:8]}",
        "message": f"CUDA error: an illegal memory access was encountered ({event_id[:8]})",
        "event_id": event_id,
    }
    conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=10)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    conn.request("POST", "/api/v1/incidents", json.dumps(body), headers)
    status = conn.getresponse().status
    conn.close()
    assert 200 <= status < 300, status
    return event_id


def unanalysed(stack: Stack, key: str, event_ids: list[str]) -> list[str]:
    """Of `event_ids`, those not stored yet or whose analysis has not ended with a
    suggestion (its own, or the one its issue's analysis answers it with)."""
    auth = {"Authorization": f"Bearer {key}"}
    left = []
    for event_id in event_ids:
        try:
            found = get_json(f"{stack.base}/api/v1/incidents?event_id={quote(event_id)}", auth)
            [incident] = found["results"]
            if incident["analysis_status"] not in ("done", "failed"):
                left.append(event_id)
                continue
            answer = get_json(f"{stack.base}/api/v1/incidents/{incident['id']}/analysis", auth)
            if not (answer.get("analysis") or {}).get("suggestion"):
                left.append(event_id)
        except (OSError, AssertionError, ValueError):
            left.append(event_id)
    return left
