"""rca's part of the JSON API: analysis answers. Thin handlers.

A router that ``webapp/api.py`` mounts on the one API (authenticated there with
``ingest.auth.ApiKeyAuth``). An incident whose signals matched an earlier occurrence
reuses its issue's analysis, so the incident endpoint falls back to the issue's latest
one and says so (`reused`).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from ingest.auth import key_of
from ingest.errors import error_response, refusals
from ingest.models import Incident, Issue
from rca.models import Analysis
from rca.schemas import (
    IncidentAnalysis,
    IssueAnalysis,
    StatusCounts,
    analysis_out,
    incident_analysis_out,
    status_counts,
)

router = Router(tags=["analysis"])


def _latest(**filters: Any) -> Analysis | None:
    return (
        Analysis.objects.filter(**filters)
        .select_related("suggestion")
        .order_by("-created_at", "-pk")
        .first()
    )


@router.get(
    "/incidents/{incident_id}/analysis",
    response={200: IncidentAnalysis, **refusals(400, 401, 404)},
    summary="Its analysis",
)
def incident_analysis(request: HttpRequest, incident_id: int) -> Any:
    incident = Incident.objects.filter(pk=incident_id, project=key_of(request).project).first()
    if incident is None:
        return error_response(404, ["path", "incident_id"], f"no incident {incident_id} here")
    own = _latest(incident=incident)
    shown = own or (
        _latest(issue_id=incident.issue_id, status=Analysis.Status.DONE)
        if incident.analysis_status == Incident.Analysis.DONE
        else None
    )
    return incident_analysis_out(incident, shown, reused=own is None and shown is not None)


@router.get(
    "/issues/{issue_id}/analysis",
    response={200: IssueAnalysis, **refusals(400, 401, 404)},
    summary="The issue's latest analysis",
)
def issue_analysis(request: HttpRequest, issue_id: int) -> Any:
    issue = Issue.objects.filter(pk=issue_id, project=key_of(request).project).first()
    if issue is None:
        return error_response(404, ["path", "issue_id"], f"no issue {issue_id} here")
    latest = _latest(issue=issue)
    return IssueAnalysis(issue_id=issue.pk, analysis=analysis_out(latest) if latest else None)


@router.get(
    "/analyses/status",
    response={200: StatusCounts, **refusals(401)},
    summary="How many incidents are in each state",
)
def analyses_status(request: HttpRequest) -> Any:
    """The project's incidents by analysis state: `failed` counts poison incidents."""
    return status_counts(key_of(request).project)
