"""`analyse(incident_id)`: claim, signals, retrieval, prompt, provider, validation, store.

Runs in a Celery worker. Every step's inputs and outputs land in an `Analysis` row, so
the UI can show why a suggestion was made and a failure is visible, never silent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from ingest import metrics
from ingest.models import Incident
from rca.models import Analysis, Suggestion
from rca.queue import claim, coalesce, lease
from rca.reuse import reusable_analysis
from rca.suggestion.context import Evidence
from rca.suggestion.evidence import (
    context_for,
    evidence_from_retrieved,
    joined_items,
    stored_bodies,
    stored_checksums,
    stored_documented_runbooks,
    with_documented_runbooks,
)
from rca.suggestion.prompts import PROMPT_VERSION

log = logging.getLogger(__name__)
K_RUNBOOKS = 5
K_PAST_FIXES = 3


def _evidence(retrieved: list[Any]) -> list[Evidence]:
    return evidence_from_retrieved(retrieved, stored_bodies(r.slug for r in retrieved))


def _cache_key(
    project_id: int,
    provider: str,
    model: str,
    signals: dict[str, Any],
    retrieved: list[dict[str, Any]],
    checksums: dict[str, str] | None = None,
) -> str:
    """Same project, provider, prompt, signals and evidence: the same suggestion.

    The project is part of the key: a suggestion is written from one project's evidence
    (its accepted fixes, its rejections), so another project never gets it from the cache.
    A past fix is identified by its incident (it has no chunk), a runbook a release-notes
    row joined by its slug, its steps and its file's checksum (`checksums`, by slug): it
    has no chunk, and an edit of its steps' `Applies:` conditions alone changes no step
    text, yet may change which step is chosen. A ranked runbook's chunks are rewritten on
    any edit, so its chunk ids say as much.
    """
    checksums = checksums or {}
    evidence = [
        (r["kind"], r["joined"], r["slug"], r["text"], checksums.get(r["slug"], ""))
        if r.get("joined")
        else (r["kind"], r["chunk_id"], r.get("incident_id"))
        for r in retrieved
    ]
    material = json.dumps(
        [project_id, provider, model, PROMPT_VERSION, signals, evidence],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(material.encode()).hexdigest()


def _notify_suggestion(suggestion_id: int) -> None:
    from rca.notify import notify_suggestion

    notify_suggestion(suggestion_id)


class AnalysisRetry(Exception):
    """This attempt failed and attempts remain: the task retries after `countdown` seconds."""

    def __init__(self, countdown: float, error: str) -> None:
        super().__init__(error)
        self.countdown = countdown


def analyse(incident_id: int, *, force: bool = False) -> Analysis | None:
    """Analyse one incident; returns the Analysis, or None when another worker has it.

    A failed attempt is recorded on the incident (count and error, see `rca/queue/claim.py`);
    while attempts remain it raises :class:`AnalysisRetry` for the task to retry with
    backoff, after the last one the incident stays `failed` and the failed Analysis (if
    one was started) is returned.
    """
    token = claim.claim(incident_id, force=force)
    if token is None:
        return None
    try:
        with lease.Renewal(incident_id, token):  # renewed while it runs, stopped either way
            analysis = _analyse_claimed(incident_id, token, force=force)
    except claim.ClaimLost:
        log.warning("incident %s: claim taken back mid-analysis; result dropped", incident_id)
        return None
    except Exception as exc:
        log.exception("analysis of incident %s failed", incident_id)
        error = claim.error_text(exc)
        failure = claim.fail(incident_id, error, token)
        if failure is not None and not failure.gave_up:
            raise AnalysisRetry(claim.retry_countdown(failure.attempts), error) from exc
        coalesce.settle_incident(incident_id)  # the repeats that waited for it go on
        return Analysis.objects.filter(incident_id=incident_id).order_by("-pk").first()
    coalesce.settle_incident(incident_id)  # the repeats that joined it are answered now
    return analysis


def _analyse_claimed(incident_id: int, token: datetime, *, force: bool) -> Analysis:
    incident = Incident.objects.select_related("issue").get(pk=incident_id)
    # We hold the claim, so any analysis of this incident still "running" lost its worker.
    Analysis.objects.filter(incident_id=incident_id, status=Analysis.Status.RUNNING).update(
        status=Analysis.Status.FAILED, error=claim.WORKER_LOST, finished_at=timezone.now()
    )
    if not force and (previous := reusable_analysis(incident)) is not None:
        log.info("incident %s: same signals as analysis %s, reusing", incident_id, previous.pk)
        _finish(incident_id, token)
        return previous

    analysis = Analysis.objects.create(incident=incident, issue_id=incident.issue_id)
    started = time.monotonic()
    try:
        _run(analysis, incident, token, force=force)
    except Exception as exc:
        Analysis.objects.filter(pk=analysis.pk).update(
            status=Analysis.Status.FAILED,
            error=claim.error_text(exc),
            finished_at=timezone.now(),
            latency_ms=int((time.monotonic() - started) * 1000),
        )
        metrics.ANALYSIS_SECONDS.labels("failed").observe(time.monotonic() - started)
        raise
    metrics.ANALYSIS_SECONDS.labels("done").observe(time.monotonic() - started)
    analysis.refresh_from_db()
    return analysis


def _finish(incident_id: int, token: datetime) -> None:
    """Mark the claim done, or raise ClaimLost (rolling back the caller's transaction)."""
    if not claim.finish(incident_id, Incident.Analysis.DONE, token):
        raise claim.ClaimLost(f"incident {incident_id}: the claim was taken back")


def _run(analysis: Analysis, incident: Incident, token: datetime, *, force: bool) -> None:
    from rca.corpus.embeddings import embed_queries
    from rca.retrieval.hybrid import search
    from rca.retrieval.past_verdicts import rejected_slugs, similar_accepted
    from rca.retrieval.signals import build_signals
    from rca.suggestion.providers import provider_from_settings
    from rca.suggestion.suggest import write_suggestion

    started = time.monotonic()
    signals = build_signals(incident)
    [vector] = embed_queries([signals.embedding_text()])
    demote = rejected_slugs(incident.issue_id, vector, project_id=incident.project_id)
    retrieved = search(signals, vector, k=K_RUNBOOKS, demote=demote)
    past = similar_accepted(
        vector, exclude_issue_id=incident.issue_id, k=K_PAST_FIXES, project_id=incident.project_id
    )
    items = retrieved + past
    evidence = _evidence(items)
    ctx = with_documented_runbooks(context_for(incident, evidence), stored_documented_runbooks)
    # The runbooks a release-notes row joined are consulted too: shown and in the cache key.
    retrieved_rows = [r.as_dict() for r in items + joined_items(ctx.evidence[len(evidence) :])]
    provider, name = provider_from_settings()
    model = getattr(provider, "model", "")
    checksums = stored_checksums(r["slug"] for r in retrieved_rows if r.get("joined"))
    key = _cache_key(incident.project_id, name, model, signals.as_dict(), retrieved_rows, checksums)
    cached = (
        None
        if force
        else (
            Suggestion.objects.filter(
                analysis__cache_key=key,
                analysis__status=Analysis.Status.DONE,
                issue__project_id=incident.project_id,  # the key says so too; belt and braces
            )
            .order_by("-created_at")
            .first()
        )
    )
    if cached is not None:
        outcome_fields = {
            "action": cached.action,
            "reason": cached.reason,
            "runbook_slug": cached.runbook_slug,
            "confidence": cached.confidence,
            "abstained": cached.abstained,
            "abstention": cached.abstention,
            "validation": cached.validation,
            "valid": cached.valid,
            "provider": cached.provider,
            "model": cached.model,
        }
        attempts: list[dict[str, Any]] = [{"cache_hit_of_analysis": cached.analysis_id}]
        prompt: list[dict[str, str]] = []
        raw, usage = "", {}
    else:
        outcome = write_suggestion(ctx, provider)
        if outcome.draft is None or outcome.validation is None:
            raise RuntimeError(f"no provider produced a suggestion: {outcome.attempts}")
        draft, check = outcome.draft, outcome.validation
        outcome_fields = {
            "action": draft.action,
            "reason": draft.reason,
            "runbook_slug": draft.runbook,
            "confidence": draft.confidence,
            "abstained": draft.abstained,
            "abstention": draft.abstention,
            "validation": check.as_dict(),
            "valid": check.ok,
            "provider": draft.provider,
            "model": draft.model,
        }
        attempts, prompt, raw, usage = outcome.attempts, outcome.prompt, draft.raw, outcome.usage
        for kind in ("prompt", "completion"):
            metrics.LLM_TOKENS.labels(kind).inc(usage.get(f"{kind}_tokens", 0))

    with transaction.atomic():
        _finish(incident.pk, token)  # first: a claim taken back writes nothing
        Analysis.objects.filter(pk=analysis.pk).update(
            status=Analysis.Status.DONE,
            provider=outcome_fields["provider"],
            model=outcome_fields["model"],
            prompt_version=PROMPT_VERSION,
            cache_key=key,
            signals=signals.as_dict(),
            query=signals.embedding_text(),
            retrieved=retrieved_rows,
            prompt=prompt,
            raw_output=raw,
            attempts=attempts,
            query_embedding=vector,
            tokens_prompt=usage.get("prompt_tokens", 0),
            tokens_completion=usage.get("completion_tokens", 0),
            latency_ms=int((time.monotonic() - started) * 1000),
            finished_at=timezone.now(),
        )
        suggestion = Suggestion.objects.create(
            analysis=analysis,
            issue_id=incident.issue_id,
            incident=incident,
            prompt_version=PROMPT_VERSION,
            **outcome_fields,
        )
        transaction.on_commit(lambda: _notify_suggestion(suggestion.pk))
    metrics.SUGGESTIONS.labels("proposed").inc()
