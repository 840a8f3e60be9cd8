"""The runbooks page: each runbook with how often suggestions in the user's projects cited it
and how those suggestions were decided. Two queries, however many suggestions exist."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count

from rca.models import Runbook, Suggestion


@dataclass
class RunbookRow:
    slug: str
    title: str
    failure_class: str
    cited: int
    accepted: int
    rejected: int


def runbooks_with_counts(user) -> list[RunbookRow]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    tallies = (
        Suggestion.objects.filter(issue__project__memberships__user=user)
        .exclude(runbook_slug="")
        .values("runbook_slug", "status")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for row in tallies:
        counts[row["runbook_slug"]][row["status"]] += row["n"]
    rows = []
    for slug, title, failure_class in Runbook.objects.order_by("failure_class", "slug").values_list(
        "slug", "title", "failure_class"
    ):
        by_status = counts.get(slug, {})
        rows.append(
            RunbookRow(
                slug=slug,
                title=title,
                failure_class=failure_class,
                cited=sum(by_status.values()),
                accepted=by_status.get(Suggestion.Status.ACCEPTED, 0),
                rejected=by_status.get(Suggestion.Status.REJECTED, 0),
            )
        )
    return rows
