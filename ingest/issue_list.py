"""Find a project's issues by status, service, model, error type or recent activity.

Filters follow the incident list's rules (``ingest/incident_list.py``): text is looked up
as it was stored (a NUL became U+FFFD), and any offset is an answer, not a database error.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from ingest.incident_list import page_bounds
from ingest.models import Issue, Project
from ingest.storable import storable_text


@dataclass(frozen=True)
class IssueFilters:
    status: str | None = None
    service: str | None = None
    model_id: str | None = None
    error_type: str | None = None
    since: datetime | None = None  # last seen at or after
    limit: int = 50
    offset: int = 0


def find_issues(project: Project, filters: IssueFilters) -> tuple[int, QuerySet[Issue]]:
    """(how many match, one page of them, most recent activity first)."""
    qs = Issue.objects.filter(project=project)
    if filters.status is not None:
        qs = qs.filter(status=filters.status)
    for field in ("service", "model_id", "error_type"):
        if (value := getattr(filters, field)) is not None:
            qs = qs.filter(**{field: storable_text(value)})
    if filters.since is not None:
        qs = qs.filter(last_seen__gte=filters.since)
    start, end = page_bounds(filters.limit, filters.offset)
    return qs.count(), qs.order_by("-last_seen", "-pk")[start:end]
