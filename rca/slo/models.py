"""The SLO tables: a project's rules and each rule's breaches (loaded with ``rca.models``)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


def window_words(seconds: int) -> str:
    """ "15 s", "5 min", "1 h", "1 h 30 min": how the message and the timeline say a window."""
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min" + (f" {secs} s" if secs else "")
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h" + (f" {minutes} min" if minutes else "")


class SloRule(models.Model):
    """A condition a project wants to hear about: `threshold` or more matches in a window.

    `incidents` rules count incidents received within the last `window_seconds` whose error
    type is one of `error_types` (the name or its last dotted part, any case) or whose
    message contains `message_contains` (any case). `alerts` rules count Alertmanager
    alerts firing now (their issue is open) whose `alertname` is one of `error_types` and
    whose labels include `labels`; their `window_seconds` is the window Prometheus already
    applied (the alert rule's `for` or range), shown in the message.
    """

    class Signal(models.TextChoices):
        INCIDENTS = "incidents"
        ALERTS = "alerts"

    project = models.ForeignKey("ingest.Project", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=100)
    condition = models.CharField(max_length=200, blank=True)  # in words: "P99 > 2 s for 15 s"
    signal = models.CharField(max_length=10, choices=Signal.choices)
    error_types = models.JSONField(default=list, blank=True)  # or alert names
    message_contains = models.CharField(max_length=200, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    threshold = models.PositiveIntegerField(default=1)
    window_seconds = models.PositiveIntegerField(default=3600)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="slo_rule_name")]

    def __str__(self) -> str:
        return self.name


class SloBreach(models.Model):
    """One breach of a rule, from the evaluation that saw it to the one that saw it clear."""

    rule = models.ForeignKey(SloRule, on_delete=models.CASCADE, related_name="breaches")
    project = models.ForeignKey("ingest.Project", on_delete=models.CASCADE, related_name="+")
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    count = models.PositiveIntegerField()  # what the rule counted when the breach opened
    threshold = models.PositiveIntegerField()  # the rule's, then
    window_seconds = models.PositiveIntegerField()

    class Meta:
        constraints = [
            # "Not repeated while the breach lasts", even with two evaluations at once.
            models.UniqueConstraint(
                fields=["rule"], condition=Q(ended_at__isnull=True), name="slo_breach_open"
            )
        ]
        indexes = [models.Index(fields=["project", "-started_at"], name="slo_breach_recent")]

    def __str__(self) -> str:
        return f"{self.rule_id} since {self.started_at:%Y-%m-%d %H:%M}"

    @property
    def window_text(self) -> str:
        return window_words(self.window_seconds)
