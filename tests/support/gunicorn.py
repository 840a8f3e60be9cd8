"""The web server as `make run` and the compose file start it (gunicorn, sync workers),
on the test database, for tests that need real HTTP framing (chunked bodies, SDKs)."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

from tests.support.processes import LoggedProcess, database_url
from webapp.supervisor import gunicorn_argv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gunicorn(LoggedProcess):
    """`gunicorn webapp.wsgi` in a subprocess; analyses go to an in-memory broker
    (dropped), so no worker of the session analyses a test's incidents behind its back."""

    what = "gunicorn"

    def __init__(
        self,
        db: dict,
        log_path: Path,
        *options: str,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {"DATABASE_URL": database_url(db), "CELERY_BROKER_URL": "memory://"}
        argv = gunicorn_argv(self.port, "--log-level", "info", *options)
        super().__init__(argv, log_path, {**env, **(extra_env or {})})

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):  # noqa: S310
                return True
        except OSError:
            return False
