"""Retrieved items -> the :class:`~rca.suggestion.context.Evidence` a provider is given (pure).

The worker (:mod:`rca.pipeline`) and ``rca eval --suggest`` both build evidence here, so
the evaluation measures exactly what production hands to a provider. Runbook bodies come
from the caller: the stored corpus for the worker, the scored corpus for the evaluation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rca.suggestion.context import AnalysisContext, Evidence, remediation

__all__ = ["context_for", "evidence_from_retrieved", "stored_bodies"]


def context_for(incident: Any, evidence: list[Evidence]) -> AnalysisContext:
    """What a provider sees of an incident (stored or an eval case's unsaved one)."""
    return AnalysisContext(
        error_type=incident.error_type,
        message=incident.message,
        frames=incident.frames,
        logs=incident.logs,
        shape_diff=incident.shape_diff,
        inference_context=incident.inference_context or {},
        resource_impact=incident.resource_impact or {},
        evidence=evidence,
    )


def evidence_from_retrieved(retrieved: Iterable[Any], bodies: Mapping[str, str]) -> list[Evidence]:
    """One Evidence per retrieved item, in order; ``bodies`` maps runbook slug -> body
    (its ``## Remediation`` steps become the evidence's remediation)."""
    items = []
    for r in retrieved:
        text = r.text
        if r.kind == "past_fix":
            text = f"Accepted fix for a similar incident: {r.text}"
        steps, applies = remediation(bodies.get(r.slug, ""))
        items.append(
            Evidence(
                slug=r.slug,
                title=r.title,
                failure_class=r.failure_class,
                text=text,
                remediation=steps,
                score=float(r.fused),
                kind=r.kind,
                applies=applies,
            )
        )
    return items


def stored_bodies(slugs: Iterable[str]) -> dict[str, str]:
    """Bodies of the stored runbooks with these slugs (one query)."""
    from rca.models import Runbook

    return dict(Runbook.objects.filter(slug__in=list(slugs)).values_list("slug", "body"))
