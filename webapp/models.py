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
    statement-level trigger on ingest_incident (migration 0004; 0006 adds IncidentDay's
    upsert to it), so ingest needs no code for it and batch inserts add one upsert per
    (issue, hour), not per row. Like an issue's occurrence count it is history: retention
    deleting incidents leaves it as it was.
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


class IncidentDay(models.Model):
    """Incidents received per issue per UTC day, in four six-hour counts (from 00, 06, 12
    and 18 UTC): the 30-day chart's rollup, kept by the same trigger as IncidentHour
    (migration 0005).

    A 30-day chart in hourly bars summed 292,000 hourly rows for the million and drew 720
    bars nobody can read; it draws 120 six-hour bars. Summed from one row per issue and
    six hours (an earlier design) they still read 138,600 rows (94 ms on the loaded bench
    machine); one row per issue and day holding the four counts reads 55,800 (50 ms).
    History like IncidentHour: retention leaves it as it was.
    """

    issue = models.ForeignKey(  # indexed by the unique index, as IncidentHour's
        "ingest.Issue", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    day = models.DateTimeField()  # midnight UTC
    h00 = models.PositiveIntegerField(default=0)
    h06 = models.PositiveIntegerField(default=0)
    h12 = models.PositiveIntegerField(default=0)
    h18 = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["issue", "day"],
                include=["h00", "h06", "h12", "h18"],
                name="incident_day_once",
            )
        ]

    def __str__(self) -> str:
        quarters = f"{self.h00}/{self.h06}/{self.h12}/{self.h18}"
        return f"issue {self.issue_id} {self.day:%Y-%m-%d} (00/06/12/18h): {quarters}"
