"""Web-side state: the heartbeat rows by which /readyz knows a worker is alive."""

from django.db import models


class WorkerHeartbeat(models.Model):
    """Last time a worker answered a ping; one row per worker hostname.

    A database row rather than Celery's remote control because the embedded broker
    (SQLAlchemy transport) has no broadcast, and web and worker share nothing else.
    """

    hostname = models.CharField(max_length=255, unique=True)
    seen_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.hostname} @ {self.seen_at:%H:%M:%S}"
