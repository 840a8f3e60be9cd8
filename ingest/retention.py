"""Retention: delete incidents received more than N days ago, in small transactions.

What stays, and why:
- Issues: untouched. Their occurrence count, first and last seen are history, not a view
  over the incidents still stored, so the issue list and page read the same after a purge.
- Incidents other records still point at (an Analysis, a Suggestion: through them the
  decisions). They are the evidence a decision was taken on, and the issue page links the
  suggestion to its occurrence. Found through the model's reverse relations, so ingest
  names no upper layer; there are few of them (one analysis per issue leader, repeats join
  it), so keeping them costs little. The alternative, SET_NULL on those foreign keys,
  would leave suggestions without the stack and shape diff they were grounded on.
- Incidents still waiting for analysis (pending or analyzing): a worker will read them.

Each batch selects up to `batch` ids with FOR UPDATE SKIP LOCKED and deletes them in one
short transaction, so no lock is held for long and ingestion or the worker never wait on
retention for more than one batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, models, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from ingest.models import Incident

DEFAULT_BATCH = 5_000
WAITING = [Incident.Analysis.PENDING, Incident.Analysis.ANALYZING]


@dataclass(frozen=True)
class RetentionResult:
    deleted: int
    kept_referenced: int  # old incidents kept because an analysis or suggestion refers to them
    kept_waiting: int  # old incidents kept because their analysis has not finished
    dry_run: bool


def _referenced() -> Q:
    """True for incidents another model refers to with a foreign key that would cascade."""
    refs: list[Exists] = []
    for rel in Incident._meta.related_objects:
        if rel.on_delete is models.DO_NOTHING or rel.related_model is Incident:
            continue
        related: type[models.Model] = rel.related_model
        refs.append(Exists(related._default_manager.filter(**{rel.field.name: OuterRef("pk")})))
    return Q(*refs, _connector=Q.OR) if refs else Q(pk__in=[])


def _old(days: int) -> QuerySet[Incident]:
    return Incident.objects.filter(received_at__lt=timezone.now() - timedelta(days=days))


def deletable(days: int) -> QuerySet[Incident]:
    """Incidents retention would delete now."""
    return _old(days).exclude(analysis_status__in=WAITING).exclude(_referenced())


def purge(days: int, *, batch: int = DEFAULT_BATCH, dry_run: bool = False) -> RetentionResult:
    """Delete incidents received more than `days` days ago (see the module docstring)."""
    if days < 0 or batch < 1:
        raise ValueError("days must be >= 0 and batch >= 1")
    old = _old(days)
    kept_waiting = old.filter(analysis_status__in=WAITING).count()
    kept_referenced = old.exclude(analysis_status__in=WAITING).filter(_referenced()).count()
    if dry_run:
        return RetentionResult(deletable(days).count(), kept_referenced, kept_waiting, True)
    deleted = 0
    while True:
        with transaction.atomic():
            ids = list(
                deletable(days)
                .order_by()
                .select_for_update(skip_locked=True, of=("self",))
                .values_list("pk", flat=True)[:batch]
            )
            if not ids:
                break
            # Raw delete: nothing cascades from these rows (referenced ones were excluded),
            # and the ORM's collector would first load every row with its JSON columns.
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM ingest_incident WHERE id = ANY(%s)", [ids])
                deleted += cursor.rowcount
    return RetentionResult(deleted, kept_referenced, kept_waiting, False)
