"""Real subprocesses for integration tests: a Celery worker against the test database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[2]


def database_url(db: dict) -> str:
    """A libpq URL for a Django DATABASES entry (unix socket or TCP)."""
    user = quote(db.get("USER") or "postgres")
    password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or ""
    if host.startswith("/"):
        return f"postgresql://{user}{password}@/{db['NAME']}?host={host}"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgresql://{user}{password}@{host}{port}/{db['NAME']}"


def sqla_broker_url(db: dict) -> str:
    """The embedded broker (kombu SQLAlchemy transport) on the given database."""
    return "sqla+postgresql+psycopg://" + database_url(db).removeprefix("postgresql://")


class Worker:
    """A `celery worker` subprocess (prefork, as users run it) with its log in a file."""

    def __init__(
        self,
        db: dict,
        broker_url: str,
        log_dir: Path,
        *,
        queues: str = "celery",
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.name = f"test-{uuid.uuid4().hex[:8]}"
        self.log_path = log_dir / f"{self.name}.log"
        env = {
            **os.environ,
            "DATABASE_URL": database_url(db),
            "CELERY_BROKER_URL": broker_url,
            "PYTHONUNBUFFERED": "1",
            **(extra_env or {}),
        }
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "webapp",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                "1",
                "--loglevel",
                "INFO",
                "-n",
                f"{self.name}@%h",
                "-Q",
                queues,
            ],
            cwd=REPO,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    @property
    def hostname_prefix(self) -> str:
        return f"{self.name}@"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if " ready." in self.log():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited early:\n{self.log()[-3000:]}")
            time.sleep(0.2)
        raise TimeoutError(f"worker not ready after {timeout}s:\n{self.log()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def wait_for(predicate, timeout: float = 30, interval: float = 0.1):
    """Poll until `predicate()` is truthy; return its value or raise TimeoutError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"condition not met within {timeout}s")
