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


class Membership(models.Model):
    """A user's access to a project: viewers read; responders decide, re-analyse, resolve."""

    class Role(models.TextChoices):
        VIEWER = "viewer"
        RESPONDER = "responder"

    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(
        "ingest.Project", on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="membership_once")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.role} of {self.project_id}"
