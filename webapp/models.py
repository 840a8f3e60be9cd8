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


class IncidentHour(models.Model):
    """Incidents received per issue per hour: the timeline chart's rollup.

    Counting the incidents themselves read every row of the range (1.3 s for 7 days of a
    million incidents); this table holds at most one row per issue and hour, kept by a
    statement-level trigger on ingest_incident (migration 0004), so ingest needs no code
    for it and batch inserts add one upsert per (issue, hour), not per row. Like an issue's
    occurrence count it is history: retention deleting incidents leaves it as it was.
    """

    issue = models.ForeignKey("ingest.Issue", on_delete=models.CASCADE, related_name="+")
    hour = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issue", "hour"], name="incident_hour_once")]

    def __str__(self) -> str:
        return f"issue {self.issue_id} {self.hour:%Y-%m-%d %H}h: {self.count}"
