"""Which incidents a rule counts: as a query (the count) and as a pure test (on ingest).

The two must agree; tests check them on the same incidents. Error types match by the
whole name or its last dotted part, in any case ("torch.cuda.OutOfMemoryError" matches
"OutOfMemoryError"); alert names match exactly, as Prometheus names are case-sensitive.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Q

from ingest.alertmanager.mapping import SOURCE as ALERT_SOURCE
from ingest.models import Incident, Issue
from rca.slo.models import SloRule


def _type_matches(error_type: str, names: list[str]) -> bool:
    error_type = error_type.strip().casefold()
    short = error_type.rpartition(".")[2]
    return any(name.casefold() in (error_type, short) for name in names)


def matches(rule: SloRule, incident: Incident) -> bool:
    """Would `rule` count this incident (ignoring time and issue status)?"""
    if rule.signal == SloRule.Signal.ALERTS:
        return (
            incident.source == ALERT_SOURCE
            and incident.error_type in rule.error_types
            and all(incident.tags.get(k) == v for k, v in (rule.labels or {}).items())
        )
    if not rule.error_types and not rule.message_contains:
        return True
    phrase = rule.message_contains.casefold()
    return _type_matches(incident.error_type, rule.error_types) or bool(
        phrase and phrase in incident.message.casefold()
    )


def _incident_filter(rule: SloRule) -> Q:
    if not rule.error_types and not rule.message_contains:
        return Q()
    q = Q(pk__in=[])
    for name in rule.error_types:
        q |= Q(error_type__iexact=name) | Q(error_type__iendswith=f".{name}")
    if rule.message_contains:
        q |= Q(message__icontains=rule.message_contains)
    return q


def count(rule: SloRule, now: datetime, limit: int | None = None) -> int:
    """Incidents within the window, or Alertmanager alerts firing now (distinct issues).

    With `limit`, counting stops there: "is the threshold reached?" then reads at most
    `threshold` rows, however large a storm fills the window (bench/slo_evaluation.py).
    """
    if rule.signal == SloRule.Signal.ALERTS:
        firing = Incident.objects.filter(
            project_id=rule.project_id,
            source=ALERT_SOURCE,
            error_type__in=rule.error_types,
            issue__status=Issue.Status.OPEN,
        )
        if rule.labels:
            firing = firing.filter(tags__contains=rule.labels)
        issues = firing.values("issue_id").distinct()
        return (issues[:limit] if limit else issues).count()
    since = now - timedelta(seconds=rule.window_seconds)
    matching = Incident.objects.filter(project_id=rule.project_id, received_at__gte=since).filter(
        _incident_filter(rule)
    )
    return (matching[:limit] if limit else matching).count()
