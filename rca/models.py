"""The runbook corpus as stored: runbooks, their chunks (with embeddings) and the corpus version."""

from __future__ import annotations

from django.db import models
from pgvector.django import HnswIndex, VectorField

EMBEDDING_DIM = 384  # all-MiniLM-L6-v2


class Runbook(models.Model):
    slug = models.SlugField(max_length=120, unique=True)
    title = models.CharField(max_length=255)
    failure_class = models.CharField(max_length=64, db_index=True)
    frameworks = models.JSONField(default=list)
    signals = models.JSONField(default=list)
    tags = models.JSONField(default=list)
    body = models.TextField()
    checksum = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.slug


class RunbookChunk(models.Model):
    """A heading-aware piece of a runbook; the unit of BM25 and vector retrieval."""

    runbook = models.ForeignKey(Runbook, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    section = models.CharField(max_length=120)
    text = models.TextField()
    # Filled by a worker (the web process never loads the model); null until then.
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["runbook", "ordinal"], name="chunk_ordinal")]
        indexes = [
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            )
        ]

    def __str__(self) -> str:
        return f"{self.runbook_id}#{self.ordinal}"


class CorpusState(models.Model):
    """Singleton: the version of the stored corpus; workers rebuild BM25 when it changes."""

    version = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.version[:12]


class Analysis(models.Model):
    """One run of the pipeline for an incident: every input and output, for audit and the UI."""

    class Status(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    incident = models.ForeignKey(
        "ingest.Incident", on_delete=models.CASCADE, related_name="analyses"
    )
    issue = models.ForeignKey("ingest.Issue", on_delete=models.CASCADE, related_name="analyses")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    provider = models.CharField(max_length=40, blank=True)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    cache_key = models.CharField(max_length=64, blank=True, db_index=True)
    signals = models.JSONField(default=dict, blank=True)
    query = models.TextField(blank=True)
    # [{slug, title, failure_class, section, chunk_id, kind, bm25, cosine, signal, fused}, ...]
    retrieved = models.JSONField(default=list, blank=True)
    prompt = models.JSONField(default=list, blank=True)  # the chat messages sent
    raw_output = models.TextField(blank=True)
    attempts = models.JSONField(default=list, blank=True)  # provider tries + validator complaints
    latency_ms = models.PositiveIntegerField(default=0)
    tokens_prompt = models.PositiveIntegerField(default=0)
    tokens_completion = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # The incident's embedding text, embedded: finds similar past incidents.
    query_embedding = VectorField(dimensions=EMBEDDING_DIM, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["issue", "-created_at"], name="analysis_by_issue"),
            HnswIndex(
                name="analysis_query_hnsw",
                fields=["query_embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"analysis {self.pk} of incident {self.incident_id} ({self.status})"


class Suggestion(models.Model):
    """The validated action + reason an analysis produced; what engineers accept or reject."""

    class Status(models.TextChoices):
        PROPOSED = "proposed"
        ACCEPTED = "accepted"
        REJECTED = "rejected"

    analysis = models.OneToOneField(Analysis, on_delete=models.CASCADE, related_name="suggestion")
    issue = models.ForeignKey("ingest.Issue", on_delete=models.CASCADE, related_name="suggestions")
    incident = models.ForeignKey(
        "ingest.Incident", on_delete=models.CASCADE, related_name="suggestions"
    )
    action = models.TextField()
    reason = models.TextField()
    runbook_slug = models.CharField(max_length=120, blank=True)
    # For the offline provider, the probability (calibrated on the dev cases, see
    # rca/suggestion/confidence.py) that the action names the fix; an LLM's own figure else.
    confidence = models.FloatField(default=0.0)
    # "No confident suggestion": confidence fell below the calibrated threshold. action and
    # reason are then only the best guess; `abstention` holds {closest: [{slug, title}],
    # wanted: [evidence that would help], threshold}.
    abstained = models.BooleanField(default=False)
    abstention = models.JSONField(default=dict, blank=True)
    # {format_ok, grounded, stack_path_match, shape_incompatibility, unknown_dim_share, ok,
    #  complaints}
    validation = models.JSONField(default=dict)
    valid = models.BooleanField(default=False)
    provider = models.CharField(max_length=40)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PROPOSED)
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["issue", "-created_at"], name="suggestion_by_issue"),
            models.Index(fields=["runbook_slug", "status"], name="suggestion_by_runbook"),
        ]

    def __str__(self) -> str:
        return self.action[:80]


class Decision(models.Model):
    """Who accepted or rejected a suggestion, when, and why: the decision history."""

    class Verdict(models.TextChoices):
        ACCEPTED = "accepted"
        REJECTED = "rejected"

    suggestion = models.ForeignKey(Suggestion, on_delete=models.CASCADE, related_name="decisions")
    user = models.ForeignKey(
        "auth.User", on_delete=models.SET_NULL, null=True, related_name="decisions"
    )
    # Who decided when it was not a signed-in user: "API key rc_ab12cd34_…" or
    # "Slack user U0123 (alice)". Shown in the history; empty for UI decisions.
    actor = models.CharField(max_length=200, blank=True)
    verdict = models.CharField(max_length=10, choices=Verdict.choices)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.verdict} by {self.user_id or self.actor}"


class Notification(models.Model):
    """One Slack message to send, at most once per (issue, kind, target); its delivery record."""

    class Kind(models.TextChoices):
        NEW_ISSUE = "new_issue"
        SUGGESTION = "suggestion"
        REGRESSION = "regression"
        DIGEST = "digest"
        TEST = "test"
        SLO_BREACH = "slo_breach"  # rca/slo: no issue; `occurrence` is the breach's id

    class Status(models.TextChoices):
        QUEUED = "queued"
        SENT = "sent"
        FAILED = "failed"
        SUPPRESSED = "suppressed"  # folded into a digest

    project = models.ForeignKey(
        "ingest.Project", on_delete=models.CASCADE, related_name="notifications"
    )
    issue = models.ForeignKey(
        "ingest.Issue",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notifications",
    )
    kind = models.CharField(max_length=12, choices=Kind.choices)
    target = models.CharField(max_length=64)  # sha256 of the webhook URL: never the URL itself
    # Tells apart events of one kind that may recur: the regressing incident's id ("" else).
    occurrence = models.CharField(max_length=32, blank=True, default="")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["issue", "kind", "target", "occurrence"],
                name="notification_once",
                condition=models.Q(issue__isnull=False),
            )
        ]
        indexes = [models.Index(fields=["project", "-created_at"], name="notification_recent")]

    def __str__(self) -> str:
        return f"{self.kind} for issue {self.issue_id}: {self.status}"


class SlackRequest(models.Model):
    """A signed Slack request already handled, kept while its timestamp is fresh.

    Slack signs a timestamp and the body, so the signature names one request; seeing it
    again inside the five-minute window is a replay. A row (not process memory) makes that
    hold across gunicorn workers; rows older than the window are purged as new ones come.
    """

    signature = models.CharField(max_length=64, unique=True)
    received_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"Slack request {self.signature[:12]}… at {self.received_at}"


# The SLO tables live with their package (rca/slo/); importing them here registers them.
from rca.slo.models import SloBreach, SloRule  # noqa: E402, F401
