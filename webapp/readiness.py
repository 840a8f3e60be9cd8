"""What /readyz checks: the database answers, the broker accepts a connection, a worker lives.

`make run` waits on the same checks in its own process (`wait_until_started`), so that
waiting for a worker busy embedding the corpus logs nothing, and, explicitly, for the
runbook corpus to be embedded: analyses before that would retrieve without vectors. (It
used to rely on the worker's first ping being queued behind `embed_corpus`; a ping routed
anywhere else would have announced "ready" with the corpus half embedded.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

PING_EVERY = 20.0  # seconds: a stale heartbeat sends at most one ping per process this often
_last_ping = 0.0


@dataclass
class Check:
    ok: bool
    detail: str


def check_database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return Check(True, "ok")
    except Exception as exc:  # any driver error means "not ready"
        return Check(False, f"{type(exc).__name__}: {exc}"[:300])


def check_broker() -> Check:
    from webapp.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=3)
            conn.default_channel  # noqa: B018 - opens a channel: the transport really works
        return Check(True, "ok")
    except Exception as exc:
        return Check(False, f"{type(exc).__name__}: {exc}"[:300])


def check_worker(broker_ok: bool) -> Check:
    """A worker answered a ping within the last minute; ask for a fresh answer when stale."""
    from webapp import heartbeat

    try:
        beat = heartbeat.latest_seen()
    except Exception as exc:
        return Check(False, f"{type(exc).__name__}: {exc}"[:300])
    stale = beat is None or timezone.now() - beat.seen_at > timedelta(seconds=PING_EVERY)
    if broker_ok and stale and _may_ping():
        from webapp.tasks import heartbeat as ping

        ping.delay()
    if heartbeat.is_fresh(beat):
        assert beat is not None
        age = (timezone.now() - beat.seen_at).total_seconds()
        return Check(True, f"{beat.hostname} answered {age:.0f}s ago")
    return Check(False, "no worker answered a ping in the last 60 s (a ping was sent)")


def _may_ping() -> bool:
    """A probe polling every second while the worker is busy (embedding the corpus) must
    not queue a ping per poll: they would all run, and log, once the worker is free."""
    global _last_ping
    now = time.monotonic()
    if now - _last_ping < PING_EVERY:
        return False
    _last_ping = now
    return True


def readiness() -> tuple[bool, dict[str, dict[str, object]]]:
    db = check_database()
    broker = check_broker()
    worker = check_worker(broker.ok) if db.ok else Check(False, "database unavailable")
    checks = {"database": db, "broker": broker, "worker": worker}
    body = {name: {"ok": c.ok, "detail": c.detail} for name, c in checks.items()}
    return all(c.ok for c in checks.values()), body


def _corpus_embedded() -> bool:
    """No runbook chunk waits for its embedding (a cheap query; no model is loaded here)."""
    from rca.corpus.embeddings import chunks_missing_embeddings

    try:
        return not chunks_missing_embeddings()
    except Exception:  # the database is still starting or restarting
        return False
    finally:
        connection.close()


def _worker_answered_since(since: datetime) -> bool:
    from webapp import heartbeat

    try:
        beat = heartbeat.latest_seen()
        return beat is not None and beat.seen_at >= since
    except Exception:  # the database is still starting or restarting
        return False
    finally:
        connection.close()  # nothing held across a database restart


def wait_until_started(
    since: datetime,
    web_listens: Callable[[], bool],
    stop: threading.Event,
    on_slow: Callable[[str], None],
    slow_after: float = 120.0,
) -> dict[str, dict[str, object]] | None:
    """Wait, silently, until a worker started after `since` answered a ping, the runbook
    corpus is embedded and the web server listens; then return the /readyz checks. None
    if `stop` is set first.

    No time limit: the first start embeds the corpus (25-110 s on a laptop) before the
    worker's first ping is answered. After `slow_after` seconds, `on_slow` gets one line
    saying what is still missing.
    """
    started = time.monotonic()
    warned = False
    while not stop.wait(1.0):
        worker, web = _worker_answered_since(since), web_listens()
        corpus = _corpus_embedded()
        if worker and corpus and web:
            try:
                return readiness()[1]
            finally:
                connection.close()
        if not warned and time.monotonic() - started > slow_after:
            warned = True
            waits = (("a worker's ping", worker), ("the corpus embedding", corpus), ("web", web))
            missing = [what for what, ok in waits if not ok]
            on_slow(f"still starting after {slow_after:.0f} s; waiting for {' and '.join(missing)}")
    return None
