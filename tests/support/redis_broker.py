"""A private Redis broker for tests that kill brokers or workers without disturbing others.

`private_redis()` starts a throwaway `redis-server` and points this process's Celery app
(the live server publishes through it) at it; workers the test starts are given its URL.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.processes import wait_for


class RedisServer:
    """A throwaway `redis-server` on a free loopback port, no persistence: kill it, start it."""

    def __init__(self, log_dir: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._log = (log_dir / "redis.log").open("ab")
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        wait_for(self._accepts, timeout=10, interval=0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        wait_for(lambda: not self._accepts(), timeout=10, interval=0.05)

    def close(self) -> None:
        self.kill()
        self._log.close()

    def queued_messages(self, queue: str = "celery") -> int:
        """Messages waiting in a queue (a Redis list named after it)."""
        import redis as redis_client

        return redis_client.Redis.from_url(self.url).llen(queue)

    def _accepts(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False


@contextmanager
def celery_broker(url: str) -> Iterator[None]:
    """Point this process's Celery app (the live server publishes through it) at `url`."""
    from django.conf import settings

    from webapp.celery import app

    saved = (app.conf.broker_url, settings.CELERY_BROKER_URL)

    def switch(to: str, setting: str) -> None:
        # The app caches its connection and producer pools; drop the references (as Celery
        # does after a fork) so the next publish uses the pool for the new URL. kombu keeps
        # one pool per URL, so switching back finds the test broker's pool as it was.
        app._pool = None
        app.amqp._producer_pool = None
        app.conf.broker_url = to
        settings.CELERY_BROKER_URL = setting

    switch(url, url)
    try:
        yield
    finally:
        app.pool.force_close_all()  # our sockets to the private broker
        switch(*saved)


@contextmanager
def private_redis(log_dir: Path) -> Iterator[RedisServer]:
    """A running private broker that this process publishes to; skips without redis-server."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed: these tests give workers a private broker")
    server = RedisServer(log_dir)
    server.start()
    try:
        with celery_broker(server.url):
            yield server
    finally:
        server.close()
