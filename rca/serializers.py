"""How analyses and suggestions look in API answers (plain dicts; one place for the shape)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from ingest.models import Incident, Project
from rca.models import Analysis, Suggestion
from rca.queue.claim import max_attempts


def suggestion_dict(s: Suggestion) -> dict[str, Any]:
    return {
        "id": s.pk,
        "incident_id": s.incident_id,
        "issue_id": s.issue_id,
        "action": s.action,
        "reason": s.reason,
        "runbook": s.runbook_slug,
        "confidence": s.confidence,
        "provider": s.provider,
        "model": s.model,
        "prompt_version": s.prompt_version,
        "valid": s.valid,
        "validation": s.validation,
        "status": s.status,
        "created_at": s.created_at.isoformat(),
        "decided_at": s.decided_at.isoformat() if s.decided_at else None,
    }


def analysis_dict(a: Analysis) -> dict[str, Any]:
    suggestion = getattr(a, "suggestion", None)
    return {
        "id": a.pk,
        "incident_id": a.incident_id,
        "issue_id": a.issue_id,
        "status": a.status,
        "provider": a.provider,
        "model": a.model,
        "prompt_version": a.prompt_version,
        "retrieved": a.retrieved,
        "latency_ms": a.latency_ms,
        "tokens": {"prompt": a.tokens_prompt, "completion": a.tokens_completion},
        "error": a.error,
        "created_at": a.created_at.isoformat(),
        "suggestion": suggestion_dict(suggestion) if suggestion else None,
    }


def attempts_dict(incident: Incident) -> dict[str, Any]:
    """How many times analysis ran for the incident, the limit, and its last error."""
    return {
        "attempts": incident.analysis_attempts,
        "max_attempts": max_attempts(),
        "error": incident.analysis_error or None,
    }


def status_counts(project: Project) -> dict[str, Any]:
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
    return {"project": project.slug, **counts, "max_attempts": max_attempts()}
