"""Real subprocesses for integration tests: a Celery worker against the test database."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[2]

#: A worker's log lines for a task it took, and for a task it finished (either way).
TASK_RECEIVED = re.compile(r"Task [\w.]+\[([0-9a-f-]+)\] received")
TASK_ENDED = re.compile(r"Task [\w.]+\[([0-9a-f-]+)\] (?:succeeded|raised|retry|failed)")

#: A worker's log line for one finished run of the single-incident analysis task.
ANALYSED = re.compile(r"Task rca\.tasks\.analyse_incident\[[^\]]+\] succeeded")


#: Every queue the app publishes to (webapp/settings.py): a test worker consumes them all.
ALL_QUEUES = "celery,fresh,repeat,housekeeping,notify"

#: The embedded broker's poll interval (RCA_EMBEDDED_BROKER_POLL, 0.05 s by default) for
#: the workers that live the whole session: polling five queues every 0.05 s cost an idle
#: worker ~18% of a core (the `llm` queue's ~6%), for the run's 15-19 minutes, on a box of
#: 2. At 0.2 s a task waits 0.15 s longer at most; workers a test starts keep the default.
SESSION_WORKER_POLL = {"RCA_EMBEDDED_BROKER_POLL": "0.2"}

#: Workers that live the whole session (tests/conftest.py stops them early under xdist,
#: once the process has only unit files left).
SESSION_LONG: list[Worker] = []


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


class LoggedProcess:
    """A server subprocess writing its output to a log file; ready when `ready()` says so."""

    what = "process"

    def __init__(self, argv: list[str], log_path: Path, env: dict[str, str]) -> None:
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            argv,
            cwd=REPO,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def ready(self) -> bool:
        raise NotImplementedError

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ready():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.what} exited early:\n{self.log()[-3000:]}")
            time.sleep(0.1)
        raise TimeoutError(f"{self.what} not ready after {timeout}s:\n{self.log()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


class Worker(LoggedProcess):
    """A `celery worker` subprocess (prefork, as users run it) with its log in a file.

    Without mingle and gossip: at start-up mingle waits a second for other workers' replies
    (to share revoked task ids, which no test uses), and a test starts a dozen workers.
    """

    what = "worker"

    def __init__(
        self,
        db: dict,
        broker_url: str,
        log_dir: Path,
        *,
        queues: str = ALL_QUEUES,
        extra_env: dict[str, str] | None = None,
        loglevel: str = "INFO",
    ) -> None:
        self.name = f"test-{uuid.uuid4().hex[:8]}"
        argv = [sys.executable, "-m", "celery", "-A", "webapp", "worker"]
        argv += ["--pool", "prefork", "--concurrency", "1", "--loglevel", loglevel]
        argv += ["--without-mingle", "--without-gossip", "-n", f"{self.name}@%h", "-Q", queues]
        env = {"DATABASE_URL": database_url(db), "CELERY_BROKER_URL": broker_url}
        super().__init__(argv, log_dir / f"{self.name}.log", {**env, **(extra_env or {})})

    @property
    def hostname_prefix(self) -> str:
        return f"{self.name}@"

    def ready(self) -> bool:
        return " ready." in self.log()

    def wait_idle(self, timeout: float = 20) -> bool:
        """Wait until every task this worker took has ended (its log says so), at most
        `timeout` seconds; whether it is idle. A test's database is truncated after it, and
        a task still writing then deadlocks with the TRUNCATE (seen in CI)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log()
            if set(TASK_RECEIVED.findall(log)) <= set(TASK_ENDED.findall(log)):
                return True
            time.sleep(0.1)
        return False

    def kill_process_tree(self) -> None:
        """SIGKILL the worker and its pool children at once: no shutdown handler runs."""
        import psutil

        parent = psutil.Process(self.proc.pid)
        procs = [parent, *parent.children(recursive=True)]
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
        psutil.wait_procs(procs, timeout=10)
        self.stop()  # reaps the parent and closes the log


def wait_for(predicate, timeout: float = 30, interval: float = 0.1):
    """Poll until `predicate()` is truthy; return its value or raise TimeoutError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"condition not met within {timeout}s")


def python(env: dict[str, str], *argv: str) -> str:
    """Run this repository's Python with `argv` and `env` added; its stdout (must exit 0)."""
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout
