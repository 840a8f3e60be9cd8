"""The web server as `make run` and the compose file start it (gunicorn, sync workers),
on the test database, for tests that need real HTTP framing (chunked bodies, SDKs)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from tests.support.processes import REPO, database_url
from webapp.supervisor import gunicorn_argv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gunicorn:
    """`gunicorn webapp.wsgi` in a subprocess; analyses go to an in-memory broker
    (dropped), so no worker of the session analyses a test's incidents behind its back."""

    def __init__(
        self,
        db: dict,
        log_path: Path,
        *options: str,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = log_path.open("wb")
        env = {
            **os.environ,
            "DATABASE_URL": database_url(db),
            "CELERY_BROKER_URL": "memory://",
            "PYTHONUNBUFFERED": "1",
            **(extra_env or {}),
        }
        self.proc = subprocess.Popen(
            gunicorn_argv(self.port, "--log-level", "info", *options),
            cwd=REPO,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited early:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):  # noqa: S310
                    return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"gunicorn not ready after {timeout}s:\n{self.log()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
