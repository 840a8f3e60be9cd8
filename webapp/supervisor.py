"""`make run`'s supervisor: start the workers, the inbox processor, the web server and the
embedded PostgreSQL, restart whichever dies, and leave nothing behind when it stops.

A dead child is restarted after an exponential backoff (1 s, 2 s, ... 30 s; a run that
lasted a minute resets it) with one log line per restart. The supervisor stops only on
Ctrl-C, SIGTERM, SIGHUP, when `make` goes away, or on a crash loop (5 restarts of one
process within 60 s), and says which. Each child runs in its own process group, and the
whole group is signalled, so Celery's beat and pool children and gunicorn's workers go
with their parent, even when the parent was killed with SIGKILL. PostgreSQL is detached
by pg_ctl, so it is watched through its `postmaster.pid` instead (see `embedded`).

Own code rather than a library: supervisord and circus restart processes, but run as
daemons with their own config files and cannot watch a postmaster that pg_ctl detached;
honcho (a Procfile runner) stops everything when one process dies, which is the
behaviour replaced here. What is needed is a restart policy and a loop, plain functions
with fast unit tests (tests/unit/test_supervisor.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PR_SET_PDEATHSIG = 1
STOP_TIMEOUT = 10.0  # seconds a child gets to finish its current work
TICK = 0.5  # seconds between looks at the children


@dataclass(frozen=True)
class RestartPolicy:
    """When to restart a process that died, and when to stop trying."""

    first_delay: float = 1.0  # seconds before the first restart; doubles per quick death
    max_delay: float = 30.0  # the backoff never waits longer than this
    stable_after: float = 60.0  # a run this long was healthy: the backoff starts over
    loop_restarts: int = 5  # this many restarts within `loop_window` and one more death
    loop_window: float = 60.0  # ... is a crash loop: the supervisor stops


@dataclass
class RestartHistory:
    """One process's restarts, by which the policy decides; times are `time.monotonic()`."""

    policy: RestartPolicy = field(default_factory=RestartPolicy)
    restarts: list[float] = field(default_factory=list)
    quick_deaths: int = 0

    def delay_after_death(self, started_at: float, died_at: float) -> float | None:
        """Seconds to wait before restarting a process that ran from `started_at` until
        `died_at`; None when that would be a crash loop."""
        p = self.policy
        self.restarts = [t for t in self.restarts if died_at - t < p.loop_window]
        if len(self.restarts) >= p.loop_restarts:
            return None
        if died_at - started_at >= p.stable_after:
            self.quick_deaths = 0
        delay = min(p.max_delay, p.first_delay * 2**self.quick_deaths)
        self.quick_deaths += 1
        return delay

    def restarted(self, at: float) -> None:
        self.restarts.append(at)


def describe_exit(status: int) -> str:
    """`-9` -> "was killed by SIGKILL", `3` -> "exited with status 3"."""
    if status < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-status).name}"
    return f"exited with status {status}"


def _own_group_and_die_with_parent() -> None:
    """In the child before exec: a process group of its own (so the supervisor can signal
    its whole family), and SIGTERM when the supervisor dies, even by SIGKILL."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    os.setpgrp()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


@dataclass
class Child:
    """A command run in its own process group, its output streamed with a prefix."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # on top of the supervisor's env
    proc: subprocess.Popen | None = None

    def start(self, env: dict[str, str], out_lock: threading.Lock) -> None:
        self.proc = subprocess.Popen(
            self.argv,
            env={**env, **self.env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_own_group_and_die_with_parent,  # noqa: PLW1509 - no threads touch the child's state
        )
        threading.Thread(target=self._stream, args=(self.proc, out_lock), daemon=True).start()

    def _stream(self, proc: subprocess.Popen, out_lock: threading.Lock) -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            with out_lock:
                sys.stdout.write(f"[{self.name:6}] {raw.decode(errors='replace').rstrip()}\n")
                sys.stdout.flush()

    def death(self) -> str | None:
        """None while the main process runs; how it ended once it has died."""
        status = None if self.proc is None else self.proc.poll()
        return None if status is None else describe_exit(status)

    def terminate(self) -> None:
        """Ask for a stop and return at once: a live leader gets SIGTERM and shuts its own
        family down gracefully (Celery's warm shutdown finishes the task at hand); when the
        leader is dead, its orphans (beat, pool, gunicorn workers) get it directly."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
        else:
            signal_group(self.proc.pid, signal.SIGTERM)

    def wait_or_kill(self, deadline: float) -> None:
        """Wait until the group is empty or `deadline` (monotonic); then SIGKILL what is
        left. A task killed this way is not lost: acks_late redelivers it, or the sweeper
        re-enqueues it."""
        if self.proc is None:
            return
        pgid = self.proc.pid
        while time.monotonic() < deadline:
            self.proc.poll()  # reap the leader, else it keeps the group alive as a zombie
            if not _group_alive(pgid):
                return
            time.sleep(0.1)
        signal_group(pgid, signal.SIGKILL)
        self.proc.wait()


@dataclass
class Watched:
    """Something the supervisor keeps alive: start it, ask whether it still runs, stop it."""

    name: str
    start: Callable[[], None]
    death: Callable[[], str | None]  # None while alive, else how it ended
    stop: Callable[[float], None]  # stop everything of it by this monotonic deadline
    terminate: Callable[[], None] = lambda: None  # ask it to stop now, without waiting
    history: RestartHistory = field(default_factory=RestartHistory)
    started_at: float = 0.0
    restart_at: float | None = None  # set while it waits out its backoff


def watch_child(child: Child, env: dict[str, str], out_lock: threading.Lock) -> Watched:
    return Watched(
        child.name,
        start=lambda: child.start(env, out_lock),
        death=child.death,
        stop=child.wait_or_kill,
        terminate=child.terminate,
    )


def listens(child: Child, port: int) -> bool:
    """`child` (not some other program) listens on `port`: asked of the kernel, so no
    request is made and nothing lands in the access log."""
    import psutil

    if child.proc is None or child.proc.poll() is not None:
        return False
    try:
        conns = psutil.Process(child.proc.pid).net_connections(kind="tcp")
    except psutil.Error:
        return False
    return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in conns)


def watch_postgres() -> Watched:
    """The embedded PostgreSQL: pg_ctl detaches it, so its pid file tells whether it runs."""
    from webapp import embedded

    return Watched(
        "postgres",
        start=embedded.ensure_running,
        death=lambda: (
            None if embedded.is_running() else "is gone (postmaster.pid names no live process)"
        ),
        stop=lambda _deadline: embedded.stop(),
    )


def say(message: str) -> None:
    """One line from the supervisor itself, written whole (the children's pumps write too)."""
    sys.stdout.write(f"[run   ] {message}\n")
    sys.stdout.flush()


class Supervisor:
    """Runs `units` in order, restarts the ones that die, stops them in reverse order."""

    def __init__(
        self,
        units: list[Watched],
        clock: Callable[[], float] = time.monotonic,
        metrics_dir: Path | None = None,  # where restarts are counted for /metrics
    ):
        self.units = units
        self.clock = clock
        self.metrics_dir = metrics_dir
        self.stopping = threading.Event()
        self.reason = ""

    def request_stop(self, reason: str) -> None:
        if not self.stopping.is_set():
            self.reason = reason
            self.stopping.set()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.request_stop(f"received {signal.Signals(signum).name}")

    def check(self, unit: Watched) -> None:
        """One look at one unit: restart it when its backoff is over, or notice its death."""
        now = self.clock()
        if unit.restart_at is not None:
            if now >= unit.restart_at:
                unit.restart_at = None
                unit.history.restarted(now)
                self._count_restart(unit.name)
                self._start(unit)
            return
        death = unit.death()
        if death is None:
            return
        unit.terminate()  # what is left of its group (beat, pool children) goes too
        unit.stop(now + 2)
        delay = unit.history.delay_after_death(unit.started_at, now)
        if delay is None:
            p = unit.history.policy
            self.request_stop(
                f"{unit.name} {death} after {p.loop_restarts} restarts"
                f" within {p.loop_window:.0f} s: a crash loop, see its log above"
            )
            return
        unit.restart_at = now + delay
        say(f"{unit.name} {death}; restarting it in {delay:.0f} s")

    def _count_restart(self, name: str) -> None:
        """rootcause_process_restarts_total: a full disk must not stop the restart itself."""
        if self.metrics_dir is None:
            return
        from ingest import metrics

        try:
            metrics.count_restart(self.metrics_dir, name)
        except OSError as exc:
            say(f"counting {name}'s restart failed: {exc}"[:500])

    def _start(self, unit: Watched) -> None:
        unit.started_at = self.clock()
        try:
            unit.start()
        except Exception as exc:  # it counts as a death: the next check backs off
            say(f"{unit.name} did not start: {type(exc).__name__}: {exc}"[:500])

    def run(self) -> int:
        """Supervise until a stop is requested; 0 after a signal, 1 after a crash loop."""
        parent = os.getppid()
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self._on_signal)
        try:
            for unit in self.units:
                self._start(unit)
            while not self.stopping.wait(TICK):
                if os.getppid() != parent:  # make was killed: we were re-parented
                    self.request_stop("make went away")
                    break
                for unit in self.units:
                    self.check(unit)
                    if self.stopping.is_set():
                        break
        finally:
            self.request_stop("stopping")
            self.stop_all()
        return 0 if self.reason.startswith("received") else 1

    def stop_all(self) -> None:
        """Children in parallel (the slowest sets the pace), the database last."""
        say(f"{self.reason}; stopping")
        for unit in reversed(self.units):
            unit.terminate()
        deadline = self.clock() + STOP_TIMEOUT
        for unit in reversed(self.units):
            try:
                unit.stop(deadline)
            except Exception as exc:  # keep stopping the others
                say(f"stopping {unit.name} failed: {type(exc).__name__}: {exc}"[:500])
        say("stopped")


def gunicorn_argv(port: int, *options: str) -> list[str]:
    """The web server as every runner starts it: 2 workers of 16 threads on loopback, plus
    `options`. Threads, so that a worker has many ingest requests in flight and its inbox
    committer writes them in one commit (ingest/inbox/committer.py; issue 19): an accept
    waits mostly for a WAL flush, and with 4 threads a storm's requests queued behind
    those waits while the CPU idled (docs/MEASUREMENTS.md, 2026-12-06 15:00)."""
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "webapp.wsgi",
        "--config",
        "python:webapp.gunicorn_conf",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "2",
        "--worker-class",
        "gthread",
        "--threads",
        "16",
        *options,
    ]


def children(port: int, data_dir: Path) -> list[Child]:
    """The workers (the general one with beat) and the web server, as quiet as is still
    informative: no Celery banner, gunicorn's warnings and access log, no tqdm bars.

    The general worker consumes every queue; a second one only the fresh queue, so a new
    failure is analysed at once however long the repeat queue is (each holds its own
    embedding model, ~300 MB: README, "Queues"). Slack messages (the notify queue) get a
    third, light worker (threads, no model): neither an analysis under way nor a model
    loading delays them, and a Slack that hangs holds one of its threads, never the fresh
    worker, which sends none."""
    from django.conf import settings

    fresh = settings.RCA_QUEUE_FRESH
    celery = [sys.executable, "-m", "celery", "-A", "webapp", "--quiet", "worker"]
    worker = [*celery, "-B", "--loglevel", "INFO", "--concurrency", "1"]  # every queue
    worker += ["--schedule", str(data_dir / "celerybeat-schedule")]
    fresh_worker = [*celery, "--loglevel", "INFO", "--concurrency", "1", "-Q", fresh]
    fresh_worker += ["-n", f"{fresh}@%h"]
    notify = settings.RCA_QUEUE_NOTIFY
    notify_worker = [*celery, "--loglevel", "INFO", "-Q", notify, "--pool", "threads"]
    notify_worker += ["--concurrency", "4", "-n", f"{notify}@%h"]
    quiet_worker = {
        "TQDM_DISABLE": "1",  # model loading bars; the corpus embedding logs its own progress
        # A developer machine or CI container runs as root; production images do not.
        "PYTHONWARNINGS": "ignore:You're running the worker with superuser privileges",
    }
    web = gunicorn_argv(port, "--access-logfile", "-", "--graceful-timeout", "5")
    # The inbox processor stores what the web accepted (ingest/inbox/); one is enough here.
    inbox = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "process_inbox"]
    return [
        Child("worker", worker, quiet_worker),
        Child("fresh", fresh_worker, quiet_worker),
        Child("notify", notify_worker, quiet_worker),
        Child("inbox", inbox),
        Child("web", [*web, "--log-level", "warning"]),
    ]
