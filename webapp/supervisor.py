"""`make run`: one command that brings up the embedded database, a Celery worker and the web server.

The children are real processes (a `celery worker` with beat, a gunicorn server), their
output is streamed with a prefix, and every one of them is stopped on Ctrl-C, SIGTERM
or when the parent (`make`) goes away — the embedded PostgreSQL included.
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
from dataclasses import dataclass, field
from pathlib import Path

PR_SET_PDEATHSIG = 1
STOP_TIMEOUT = 10.0  # seconds a child gets to finish its current work


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the supervisor dies, even by SIGKILL."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    os.setpgrp()


@dataclass
class Child:
    name: str
    argv: list[str]
    proc: subprocess.Popen | None = None
    pump: threading.Thread | None = field(default=None, repr=False)

    def start(self, env: dict[str, str], out_lock: threading.Lock) -> None:
        self.proc = subprocess.Popen(
            self.argv,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - no threads touch the child's state
        )
        self.pump = threading.Thread(target=self._stream, args=(out_lock,), daemon=True)
        self.pump.start()

    def _stream(self, out_lock: threading.Lock) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for raw in iter(self.proc.stdout.readline, b""):
            with out_lock:
                sys.stdout.write(f"[{self.name:6}] {raw.decode(errors='replace').rstrip()}\n")
                sys.stdout.flush()

    def terminate(self) -> None:
        """Ask the whole group (gunicorn/celery children too) to stop; returns at once."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)

    def wait_or_kill(self, deadline: float) -> None:
        """Wait until `deadline` (monotonic); then SIGKILL the group. A task killed this way
        is not lost: acks_late redelivers it, or the sweeper re-enqueues it."""
        if self.proc is None:
            return
        try:
            self.proc.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def gunicorn_argv(port: int, *options: str) -> list[str]:
    """The web server as every runner starts it: 2 workers on loopback, plus `options`."""
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "webapp.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "2",
        *options,
    ]


def children(port: int, data_dir: Path) -> list[Child]:
    python = sys.executable
    return [
        Child(
            "worker",
            [
                python,
                "-m",
                "celery",
                "-A",
                "webapp",
                "worker",
                "-B",
                "--loglevel",
                "INFO",
                "--concurrency",
                "1",
                "--schedule",
                str(data_dir / "celerybeat-schedule"),
            ],
        ),
        Child(
            "web",
            gunicorn_argv(
                port,
                "--access-logfile",
                "-",
                "--graceful-timeout",
                "5",
            ),
        ),
    ]


class Supervisor:
    def __init__(self, kids: list[Child], on_exit: list) -> None:
        self.kids = kids
        self.on_exit = on_exit
        self.stopping = threading.Event()
        self.out_lock = threading.Lock()

    def _request_stop(self, signum: int, _frame: object) -> None:
        self.stopping.set()

    def run(self, env: dict[str, str]) -> int:
        parent = os.getppid()
        signal.signal(signal.SIGINT, self._request_stop)
        signal.signal(signal.SIGTERM, self._request_stop)
        signal.signal(signal.SIGHUP, self._request_stop)
        code = 0
        try:
            for kid in self.kids:
                kid.start(env, self.out_lock)
            while not self.stopping.wait(0.5):
                if os.getppid() != parent:  # make was killed: we were re-parented
                    break
                dead = [
                    (k.name, status)
                    for k in self.kids
                    if k.proc is not None and (status := k.proc.poll()) is not None
                ]
                if dead:
                    print(
                        f"[run   ] {dead[0][0]} exited with {dead[0][1]}; stopping",
                        flush=True,
                    )
                    code = 1
                    break
        finally:
            print("[run   ] stopping worker and web server…", flush=True)
            for kid in self.kids:  # in parallel: shutdown takes the slowest, not the sum
                kid.terminate()
            deadline = time.monotonic() + STOP_TIMEOUT
            for kid in self.kids:
                kid.wait_or_kill(deadline)
            for hook in self.on_exit:
                hook()
            print("[run   ] stopped", flush=True)
        return code


def wait_until_ready(url: str, timeout: float = 60) -> dict | None:
    """Poll /readyz until it answers 200; returns its body, or None on timeout."""
    import json
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=3) as resp:  # noqa: S310 - our own URL
                return json.loads(resp.read())
        except Exception:
            time.sleep(0.5)
    return None
