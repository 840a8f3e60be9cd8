"""How analyses and suggestions look in API answers: one schema per answer, built here.

The builders return the schemas themselves, so what the OpenAPI document shows and what
the API sends are one definition (ingest keeps dicts in ``serializers.py`` mirrored by
``responses.py``; here there is nothing else reading the dicts).
"""

from __future__ import annotations

from typing import Any, Literal

from django.db.models import Count
from ninja import Schema
from pydantic import Field

from ingest.models import Incident, Project
from ingest.responses import Answer, IsoTime, one_of
from rca.models import Analysis, Suggestion
from rca.queue.claim import max_attempts


class ClosestRunbook(Answer):
    slug: str
    title: str


class Abstention(Answer):
    """Why there is no confident suggestion and what would give one."""

    closest: list[ClosestRunbook]
    wanted: list[str] = Field(description="evidence the incident lacks that would help")
    threshold: float


def _abstention(s: Suggestion) -> Abstention | None:
    data = s.abstention if isinstance(s.abstention, dict) else {}
    if not s.abstained:
        return None
    closest = [
        ClosestRunbook(slug=str(item.get("slug", "")), title=str(item.get("title", "")))
        for item in data.get("closest") or []
        if isinstance(item, dict)
    ]
    wanted = [str(item) for item in data.get("wanted") or []]
    return Abstention(closest=closest, wanted=wanted, threshold=float(data.get("threshold", 0)))


class SuggestionOut(Answer):
    id: int
    incident_id: int
    issue_id: int
    action: str
    reason: str
    runbook: str
    confidence: float
    abstained: bool = Field(
        description="no confident suggestion: confidence is below the calibrated threshold, "
        "so action and reason are only the best guess; see `abstention`"
    )
    abstention: Abstention | None = Field(
        description="for an abstention: the closest runbooks and what evidence would help"
    )
    provider: str
    model: str
    prompt_version: str
    valid: bool
    validation: dict[str, Any]
    status: str = Field(json_schema_extra=one_of(Suggestion.Status))
    created_at: IsoTime
    decided_at: IsoTime | None


class DecisionIn(Schema):
    """A verdict on a suggestion; rejecting needs a note (the next engineer reads it)."""

    verdict: Literal["accepted", "rejected"]
    note: str = Field("", max_length=2000)


class Tokens(Answer):
    prompt: int
    completion: int


class AnalysisOut(Answer):
    id: int
    incident_id: int
    issue_id: int
    status: str = Field(json_schema_extra=one_of(Analysis.Status))
    provider: str
    model: str
    prompt_version: str
    retrieved: list[Any]
    latency_ms: int
    tokens: Tokens
    error: str
    created_at: IsoTime
    suggestion: SuggestionOut | None


class IncidentAnalysis(Answer):
    """An incident's analysis: its own, or its issue's latest (`reused`) when it matched one."""

    incident_id: int
    analysis_status: str = Field(json_schema_extra=one_of(Incident.Analysis))
    attempts: int
    max_attempts: int
    error: str | None
    reused: bool
    reused_from_incident_id: int | None = Field(
        description="the occurrence whose analysis this one reused (null when not reused)"
    )
    analysis: AnalysisOut | None


class IssueAnalysis(Answer):
    issue_id: int
    analysis: AnalysisOut | None


class StatusCounts(Answer):
    """Incidents waiting for (`pending`), in (`analyzing`) or out of attempts (`failed`)."""

    project: str
    pending: int
    analyzing: int
    failed: int
    max_attempts: int


def suggestion_out(s: Suggestion) -> SuggestionOut:
    return SuggestionOut(
        id=s.pk,
        incident_id=s.incident_id,
        issue_id=s.issue_id,
        action=s.action,
        reason=s.reason,
        runbook=s.runbook_slug,
        confidence=s.confidence,
        abstained=s.abstained,
        abstention=_abstention(s),
        provider=s.provider,
        model=s.model,
        prompt_version=s.prompt_version,
        valid=s.valid,
        validation=s.validation,
        status=s.status,
        created_at=s.created_at.isoformat(),
        decided_at=s.decided_at.isoformat() if s.decided_at else None,
    )


def analysis_out(a: Analysis) -> AnalysisOut:
    suggestion = getattr(a, "suggestion", None)
    return AnalysisOut(
        id=a.pk,
        incident_id=a.incident_id,
        issue_id=a.issue_id,
        status=a.status,
        provider=a.provider,
        model=a.model,
        prompt_version=a.prompt_version,
        retrieved=a.retrieved,
        latency_ms=a.latency_ms,
        tokens=Tokens(prompt=a.tokens_prompt, completion=a.tokens_completion),
        error=a.error,
        created_at=a.created_at.isoformat(),
        suggestion=suggestion_out(suggestion) if suggestion else None,
    )


def incident_analysis_out(
    incident: Incident, shown: Analysis | None, *, reused: bool
) -> IncidentAnalysis:
    """How many times analysis ran for the incident, the limit, its last error, and `shown`."""
    return IncidentAnalysis(
        incident_id=incident.pk,
        analysis_status=incident.analysis_status,
        attempts=incident.analysis_attempts,
        max_attempts=max_attempts(),
        error=incident.analysis_error or None,
        reused=reused,
        reused_from_incident_id=shown.incident_id if reused and shown else None,
        analysis=analysis_out(shown) if shown else None,
    )


def status_counts(project: Project) -> StatusCounts:
    """Incidents waiting for, in, or out of analysis attempts (`failed`): the ones an
    operator acts on. `done` is left out: counting it would read every incident, while
    these three are served by partial indexes."""
    states = (Incident.Analysis.PENDING, Incident.Analysis.ANALYZING, Incident.Analysis.FAILED)
    unfinished = [state.value for state in states]
    rows = (
        Incident.objects.filter(project=project, analysis_status__in=unfinished)
        .values_list("analysis_status")
        .annotate(n=Count("pk"))
        .order_by()
    )
    counts = dict.fromkeys(unfinished, 0) | {status: n for status, n in rows}
    return StatusCounts(project=project.slug, **counts, max_attempts=max_attempts())
