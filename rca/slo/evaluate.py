"""Open and close breaches: on ingest (what was just stored) and periodically (everything).

On ingest, only rules that one of the stored incidents matches and that are not breached
already are counted: a storm of a breached rule costs one query per batch, not a count.
Closing needs time to pass (a window empties) or an alert to resolve, which no stored
incident announces, so the periodic evaluation (``rca.tasks.evaluate_slos``, Celery beat
every RCA_SLO_INTERVAL seconds on the housekeeping queue) does that, and opens what
ingest could not see (a rule edited to a lower threshold).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from ingest.models import Incident, Project
from rca.slo.defaults import rules_of
from rca.slo.matching import count, matches
from rca.slo.message import notify_breach
from rca.slo.models import SloBreach, SloRule

log = logging.getLogger(__name__)


def _reached(rule: SloRule, now: datetime) -> bool:
    return count(rule, now, limit=rule.threshold) >= rule.threshold


def _open(project: Project, rule: SloRule, now: datetime) -> SloBreach | None:
    """A new breach and its message (with the full count); None when another evaluation
    opened it first."""
    n = count(rule, now)
    try:
        with transaction.atomic():
            breach = SloBreach.objects.create(
                rule=rule,
                project=project,
                started_at=now,
                count=n,
                threshold=rule.threshold,
                window_seconds=rule.window_seconds,
            )
            notify_breach(project, rule, breach)
    except IntegrityError:  # the one open breach per rule exists: told already
        return None
    log.info("project %s: SLO breach of %r (%s)", project.pk, rule.name, n)
    return breach


def evaluate(project: Project, now: datetime | None = None) -> list[SloBreach]:
    """Count every enabled rule: open the breaches that begin, close those that cleared."""
    now = now or timezone.now()
    open_by_rule = {
        b.rule_id: b for b in SloBreach.objects.filter(project=project, ended_at__isnull=True)
    }
    opened = []
    for rule in rules_of(project):
        breach = open_by_rule.get(rule.pk)
        reached = rule.enabled and _reached(rule, now)
        if reached and breach is None:
            if (new := _open(project, rule, now)) is not None:
                opened.append(new)
        elif not reached and breach is not None:
            SloBreach.objects.filter(pk=breach.pk).update(ended_at=now)
    return opened


def evaluate_stored(project: Project, incidents: Sequence[Incident]) -> list[SloBreach]:
    """Open the breaches these incidents may have caused (rules not breached already).

    Open breaches are read only when a stored incident matches a rule: most batches match
    none, and a statement fewer per batch is CPU the inbox processor leaves to requests.
    """
    now = timezone.now()
    matched = [
        rule
        for rule in rules_of(project)
        if rule.enabled and any(matches(rule, i) for i in incidents)
    ]
    if not matched:
        return []
    breached = set(
        SloBreach.objects.filter(project=project, ended_at__isnull=True).values_list(
            "rule_id", flat=True
        )
    )
    opened = []
    for rule in matched:
        if rule.pk in breached:
            continue
        if _reached(rule, now) and (new := _open(project, rule, now)):
            opened.append(new)
    return opened


def evaluate_all() -> int:
    """The periodic pass: every project with a rule or an open breach; breaches opened."""
    projects = Project.objects.filter(pk__in=SloRule.objects.values("project_id"))
    return sum(len(evaluate(project)) for project in projects)


def on_incidents_stored(
    sender: Any, project: Project, incidents: Sequence[Incident], **_: Any
) -> None:
    """The `ingest.signals.incidents_stored` receiver (webapp/apps.py); never breaks ingest."""
    try:
        with transaction.atomic():
            evaluate_stored(project, incidents)
    except Exception:
        log.exception("project %s: SLO evaluation on ingest failed", project.pk)
