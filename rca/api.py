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
from rca.feedback import DecisionError, decide
from rca.models import Analysis, Suggestion
from rca.reuse import answering_analysis
from rca.schemas import (
    DecisionIn,
    IncidentAnalysis,
    IssueAnalysis,
    StatusCounts,
    SuggestionOut,
    analysis_out,
    incident_analysis_out,
    status_counts,
    suggestion_out,
)

router = Router(tags=["analysis"])


@router.get(
    "/incidents/{incident_id}/analysis",
    response={200: IncidentAnalysis, **refusals(400, 401, 404)},
    summary="Its analysis",
)
def incident_analysis(request: HttpRequest, incident_id: int) -> Any:
    incident = Incident.objects.filter(pk=incident_id, project=key_of(request).project).first()
    if incident is None:
        return error_response(404, ["path", "incident_id"], f"no incident {incident_id} here")
    answer = answering_analysis(incident)
    return incident_analysis_out(incident, answer.analysis, reused=answer.reused)


@router.get(
    "/issues/{issue_id}/analysis",
    response={200: IssueAnalysis, **refusals(400, 401, 404)},
    summary="The issue's latest analysis",
)
def issue_analysis(request: HttpRequest, issue_id: int) -> Any:
    issue = Issue.objects.filter(pk=issue_id, project=key_of(request).project).first()
    if issue is None:
        return error_response(404, ["path", "issue_id"], f"no issue {issue_id} here")
    latest = (
        Analysis.objects.filter(issue=issue)
        .select_related("suggestion")
        .order_by("-created_at", "-pk")
        .first()
    )
    return IssueAnalysis(issue_id=issue.pk, analysis=analysis_out(latest) if latest else None)


@router.post(
    "/suggestions/{suggestion_id}/decision",
    response={200: SuggestionOut, **refusals(400, 401, 404, 413, 415)},
    summary="Accept or reject a suggestion",
    description="The same rules as the UI: rejecting needs a `note`. The decision is recorded "
    "with the key that made it, and the answer is the suggestion with its new `status`.",
)
def suggestion_decision(request: HttpRequest, suggestion_id: int, decision: DecisionIn) -> Any:
    key = key_of(request)
    suggestion = Suggestion.objects.filter(pk=suggestion_id, issue__project=key.project).first()
    if suggestion is None:
        return error_response(404, ["path", "suggestion_id"], f"no suggestion {suggestion_id} here")
    try:
        decide(
            suggestion, None, decision.verdict, decision.note, actor=f"API key {key.name} ({key})"
        )
    except DecisionError as exc:
        return error_response(400, ["body", "decision", "note"], str(exc))
    return suggestion_out(suggestion)


@router.get(
    "/analyses/status",
    response={200: StatusCounts, **refusals(401)},
    summary="How many incidents are in each state",
)
def analyses_status(request: HttpRequest) -> Any:
    """The project's incidents by analysis state: `failed` counts poison incidents."""
    return status_counts(key_of(request).project)
