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

    # The unique index leads with the issue and carries the count (INCLUDE): the chart's sum
    # is an index-only scan, one index range per issue, instead of one heap page per row
    # (the rows of an issue are scattered in time order): 7 days of the million, 198 -> 56
    # ms. It serves the foreign key too, so the key has no index of its own.
    issue = models.ForeignKey(
        "ingest.Issue", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    hour = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["issue", "hour"], include=["count"], name="incident_hour_once"
            )
        ]

    def __str__(self) -> str:
        return f"issue {self.issue_id} {self.hour:%Y-%m-%d %H}h: {self.count}"


class IncidentSixHours(models.Model):
    """Incidents received per issue per six hours (00, 06, 12, 18 UTC): the 30-day chart's
    rollup, kept by the same trigger as IncidentHour (migration 0005).

    A 30-day chart in hourly bars summed 292,000 hourly rows for the million (~45 ms) and
    drew 720 bars nobody can read; six-hour bars are 120, summed from under half as many rows
    (138,600). History like IncidentHour: retention leaves it as it was.
    """

    issue = models.ForeignKey(  # indexed by the unique index, as IncidentHour's
        "ingest.Issue", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["issue", "start"], include=["count"], name="incident_six_hours_once"
            )
        ]

    def __str__(self) -> str:
        return f"issue {self.issue_id} {self.start:%Y-%m-%d %H}h+6h: {self.count}"
