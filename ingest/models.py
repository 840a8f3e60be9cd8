"""What ingestion stores: projects and their keys, issues (groups) and incidents (occurrences)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from django.db import models
from django.db.models import Q

if TYPE_CHECKING:
    from ingest.parsing.frames import Frame


def _sentry_key() -> str:
    return secrets.token_hex(16)


new_sentry_key = _sentry_key  # public name for rotation (0001 refers to the private one)


class Project(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    # The public key of the Sentry DSN (public like Sentry's: it only allows sending events).
    sentry_key = models.CharField(max_length=64, unique=True, default=_sentry_key)
    slack_webhook_url = models.URLField(max_length=500, blank=True)
    # Set when Slack answered with a permanent failure (404, invalid_token, ...): no more sends.
    slack_disabled_at = models.DateTimeField(null=True, blank=True)
    slack_disabled_reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class ApiKey(models.Model):
    """A bearer key `rc_<prefix>_<secret>`; only a hash of the secret is stored."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, default="default")
    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"rc_{self.prefix}_…"


class Issue(models.Model):
    """A group of incidents sharing a fingerprint: one bug, however many occurrences."""

    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"
        IGNORED = "ignored"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="issues")
    fingerprint = models.CharField(max_length=64)
    title = models.CharField(max_length=255)
    error_type = models.CharField(max_length=255, blank=True)
    culprit = models.CharField(max_length=255, blank=True)
    service = models.CharField(max_length=200, blank=True)
    model_id = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    occurrence_count = models.PositiveIntegerField(default=0)
    # The occurrence whose analysis is queued or running for this issue, if any: state kept
    # for rca/queue/coalesce.py (repeats join it instead of queueing their own). Stale once
    # that incident is done or failed. No database constraint: retention may delete it.
    analysis_leader = models.ForeignKey(
        "Incident",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "fingerprint"], name="issue_fingerprint")
        ]
        indexes = [models.Index(fields=["project", "-last_seen"], name="issue_recent")]

    def __str__(self) -> str:
        return self.title


class Incident(models.Model):
    """One occurrence, stored as received (scrubbed) plus what parsing derived from it."""

    class Analysis(models.TextChoices):
        PENDING = "pending"
        ANALYZING = "analyzing"
        DONE = "done"
        FAILED = "failed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="incidents")
    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="incidents")
    event_id = models.CharField(max_length=64)
    source = models.CharField(max_length=10, default="api")  # api | sentry
    service = models.CharField(max_length=200)
    environment = models.CharField(max_length=100, blank=True)
    occurred_at = models.DateTimeField()
    received_at = models.DateTimeField(auto_now_add=True)
    error_type = models.CharField(max_length=255, blank=True)
    message = models.TextField(blank=True)
    stacktrace_raw = models.JSONField(null=True, blank=True)
    exceptions = models.JSONField(default=list, blank=True)  # parsed, oldest first
    logs = models.JSONField(default=list, blank=True)  # parsed entries
    shape_diff = models.JSONField(default=list, blank=True)
    shape_diff_source = models.CharField(max_length=10, blank=True)  # sent | extracted
    inference_context = models.JSONField(default=dict, blank=True)
    resource_impact = models.JSONField(default=dict, blank=True)
    tags = models.JSONField(default=dict, blank=True)
    model_id = models.CharField(max_length=200, blank=True)
    fingerprint = models.CharField(max_length=64)
    analysis_status = models.CharField(
        max_length=10, choices=Analysis.choices, default=Analysis.PENDING
    )
    analysis_updated_at = models.DateTimeField(auto_now_add=True)
    # Claims so far (each counts, finished or not); at RCA_ANALYSIS_MAX_ATTEMPTS the incident
    # is `failed` for good until a responder re-analyses it (which resets the count).
    analysis_attempts = models.PositiveSmallIntegerField(default=0)
    analysis_error = models.TextField(blank=True)  # the last failed attempt's error, ours
    # While `analyzing`: the claim holds until then, renewed by the worker every third of
    # RCA_ANALYSIS_LEASE (rca/queue/lease.py); once past, its worker is gone and the
    # sweeper re-queues the incident. Null: never claimed (or claimed before leases).
    analysis_lease_until = models.DateTimeField(null=True, blank=True)
    # Pending without a message of its own: it waits for its issue's `analysis_leader` and is
    # settled when that analysis ends (rca/queue/coalesce.py).
    analysis_joined = models.BooleanField(default=False)
    # What this occurrence did to its issue: opened it ("new"), reopened a resolved one
    # ("regressed") or nothing (""). Notifications key off it; ingest only records the fact.
    opened_issue = models.CharField(max_length=10, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "event_id"], name="incident_event_id")
        ]
        indexes = [
            models.Index(fields=["issue", "-received_at"], name="incident_by_issue"),
            models.Index(fields=["project", "-received_at"], name="incident_recent"),
            # The API's service filter: its count read every row of the project without it.
            models.Index(fields=["project", "service", "-received_at"], name="incident_by_service"),
            # The sweeper's stuck claims and the timeline's backlog banner; the banner's
            # columns ride along so its aggregate is an index-only scan (migration 0010).
            models.Index(
                fields=["analysis_status", "analysis_updated_at"],
                include=["project", "analysis_joined"],
                name="incident_analysis_stuck",
                condition=Q(analysis_status__in=["pending", "analyzing"]),
            ),
            models.Index(
                fields=["project"],
                name="incident_analysis_failed",
                condition=Q(analysis_status="failed"),
            ),
            models.Index(
                fields=["issue", "analysis_updated_at"],
                name="incident_joined",
                condition=Q(analysis_joined=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.error_type}: {self.message[:60]}"

    @property
    def frames(self) -> list[Frame]:
        """Frames of the exception finally raised (the last one), caller to callee."""
        return self.exceptions[-1]["frames"] if self.exceptions else []


class InboxItem(models.Model):
    """An accepted incident not yet processed: the request wrote it, `ingest/inbox/process.py`
    scrubs, parses, groups and stores it, then deletes it in the same transaction.

    `payload` is the validated payload as the client sent it (for `sentry-raw` rows, the
    Sentry event's fields the mapping reads, mapped by the processor:
    `ingest/sentry/deferred.py`), *unscrubbed*: only the processor reads it; no page, API
    answer, prompt or message ever shows a row of this table. `event_id` is the incident's id
    from the start (the client's, normalised, or one assigned at accept), so the 202 can name
    it and a retry finds it here or stored.
    """

    # No index of its own: the unique (project, event_id) index serves the foreign key.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    source = models.CharField(max_length=10)  # api | sentry | sentry-raw (mapped when processed)
    event_id = models.CharField(max_length=64)
    payload = models.JSONField()
    received_at = models.DateTimeField()
    # Set when storing this row failed on its own (not for a database outage): it is then
    # left out of claims, kept for an operator, and counted on /metrics, never deleted.
    failed_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)  # the exception's type and first line

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "event_id"], name="inbox_event_id")
        ]

    def __str__(self) -> str:
        return f"inbox {self.event_id}"


class RateBucket(models.Model):
    """Token bucket per API key (or Sentry key), shared by every web process via the database."""

    key = models.CharField(max_length=80, primary_key=True)
    tokens = models.FloatField()
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.key}: {self.tokens:.1f}"
