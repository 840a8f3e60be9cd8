"""What /readyz checks: the database answers, the broker accepts a connection, a worker lives."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import connection
from django.utils import timezone


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
    if broker_ok and (beat is None or timezone.now() - beat.seen_at > timedelta(seconds=20)):
        from webapp.tasks import heartbeat as ping

        ping.delay()
    if heartbeat.is_fresh(beat):
        assert beat is not None
        age = (timezone.now() - beat.seen_at).total_seconds()
        return Check(True, f"{beat.hostname} answered {age:.0f}s ago")
    return Check(False, "no worker answered a ping in the last 60 s (a ping was sent)")


def readiness() -> tuple[bool, dict[str, dict[str, object]]]:
    db = check_database()
    broker = check_broker()
    worker = check_worker(broker.ok) if db.ok else Check(False, "database unavailable")
    checks = {"database": db, "broker": broker, "worker": worker}
    body = {name: {"ok": c.ok, "detail": c.detail} for name, c in checks.items()}
    return all(c.ok for c in checks.values()), body
