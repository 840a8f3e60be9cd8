"""Worker liveness: workers record pings, /readyz reads them."""

from __future__ import annotations

import logging
import socket
from datetime import timedelta

from django.utils import timezone

from webapp.models import WorkerHeartbeat

FRESH_FOR = timedelta(seconds=60)
log = logging.getLogger(__name__)


def record(hostname: str | None = None) -> None:
    """Called by a worker answering a ping (every 30 s: logged at DEBUG only)."""
    hostname = hostname or socket.gethostname()
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"seen_at": timezone.now()}
    )
    log.debug("heartbeat from %s", hostname)


def latest_seen() -> WorkerHeartbeat | None:
    return WorkerHeartbeat.objects.order_by("-seen_at").first()


def is_fresh(beat: WorkerHeartbeat | None) -> bool:
    return beat is not None and timezone.now() - beat.seen_at <= FRESH_FOR
