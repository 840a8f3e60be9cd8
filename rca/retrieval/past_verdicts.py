"""What engineers decided about similar incidents: suggestions accepted for them (shown as
past fixes beside the runbooks) and runbooks rejected for this or a near-identical incident
(demoted in the ranking, :func:`rca.retrieval.hybrid.search`'s ``demote``). Both compare the
incident's query embedding with the ones stored on earlier analyses (pgvector's cosine
distance), within one project.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from rca.retrieval.hybrid import Retrieved, unit_vector

if TYPE_CHECKING:
    from django.db.models import QuerySet
    from django_stubs_ext import WithAnnotations

    from rca.models import Analysis

__all__ = ["SAME_INCIDENT", "SIMILAR_INCIDENT", "rejected_slugs", "similar_accepted"]

SIMILAR_INCIDENT = 0.6  # cosine from which a past accepted incident counts as similar
SAME_INCIDENT = 0.9  # cosine from which another issue's rejection applies here too


class _Distance(TypedDict):
    distance: float  # cosine distance of the analysis' query embedding to ours


def _similar_analyses(
    query_embedding: Sequence[float], **filters: Any
) -> QuerySet[WithAnnotations[Analysis, _Distance]]:
    """Analyses ordered by exact cosine distance to the query (``distance`` annotated).

    Exact on purpose: pgvector 0.6.2 has no iterative index scans, so an HNSW scan with a
    filter (accepted, same project) can return fewer rows than asked. ``+ 0`` keeps the
    planner off the index; the filtered set (decided suggestions) is small.
    """
    from django.db.models import FloatField, Value
    from django.db.models.expressions import ExpressionWrapper
    from pgvector.django import CosineDistance

    from rca.models import Analysis

    distance = ExpressionWrapper(
        CosineDistance("query_embedding", unit_vector(query_embedding).tolist()) + Value(0.0),
        output_field=FloatField(),
    )
    return (
        Analysis.objects.filter(query_embedding__isnull=False, **filters)
        .annotate(distance=distance)
        .order_by("distance")
    )


def similar_accepted(
    query_embedding: Sequence[float] | None,
    exclude_issue_id: int | None,
    k: int = 3,
    *,
    project_id: int,
) -> list[Retrieved]:
    """Past incidents of project ``project_id`` like this one whose suggestion was accepted,
    as ``past_fix`` items: accepted fixes become retrievable knowledge. One per issue, most
    similar first, only above :data:`SIMILAR_INCIDENT` cosine."""
    if query_embedding is None:
        return []
    from rca.models import Runbook

    analyses = _similar_analyses(
        query_embedding, suggestion__status="accepted", issue__project_id=project_id
    ).select_related("suggestion", "incident")
    if exclude_issue_id is not None:
        analyses = analyses.exclude(issue_id=exclude_issue_id)
    found: list[Retrieved] = []
    seen_issues: set[int] = set()
    for analysis in analyses[: k * 5]:
        similarity = 1.0 - float(analysis.distance)
        if similarity < SIMILAR_INCIDENT or len(found) >= k:
            break
        if analysis.issue_id in seen_issues:
            continue
        seen_issues.add(analysis.issue_id)
        suggestion = analysis.suggestion
        runbook = Runbook.objects.filter(slug=suggestion.runbook_slug).first()
        found.append(
            Retrieved(
                slug=suggestion.runbook_slug,
                title=runbook.title if runbook else str(analysis.incident)[:200],
                failure_class=runbook.failure_class if runbook else "",
                section="accepted fix",
                chunk_id=None,
                text=f"{suggestion.action}\n{suggestion.reason}",
                bm25=0.0,
                cosine=round(similarity, 4),
                signal=0.0,
                fused=round(similarity, 6),
                kind="past_fix",
                action=suggestion.action,
                reason=suggestion.reason,
                incident_id=analysis.incident_id,
                issue_id=analysis.issue_id,
            )
        )
    return found


def rejected_slugs(
    issue_id: int | None,
    query_embedding: Sequence[float] | None = None,
    *,
    project_id: int,
) -> set[str]:
    """Runbook slugs to demote: rejected for this issue (and not accepted for it since),
    or rejected for another incident of project ``project_id`` at least
    :data:`SAME_INCIDENT` similar. Another project's rejection never demotes here."""
    from rca.models import Suggestion

    slugs: set[str] = set()
    if issue_id is not None:
        decided = Suggestion.objects.filter(
            issue_id=issue_id, issue__project_id=project_id
        ).exclude(runbook_slug="")
        rejected = set(decided.filter(status="rejected").values_list("runbook_slug", flat=True))
        accepted = set(decided.filter(status="accepted").values_list("runbook_slug", flat=True))
        slugs |= rejected - accepted
    if query_embedding is not None:
        for analysis in _similar_analyses(
            query_embedding, suggestion__status="rejected", issue__project_id=project_id
        ).select_related("suggestion")[:20]:
            if 1.0 - float(analysis.distance) < SAME_INCIDENT:
                break
            if analysis.suggestion.runbook_slug:
                slugs.add(analysis.suggestion.runbook_slug)
    return slugs
