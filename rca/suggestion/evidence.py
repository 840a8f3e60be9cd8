"""Retrieved items -> the :class:`~rca.suggestion.context.Evidence` a provider is given (pure).

The worker (:mod:`rca.pipeline`) and ``rca eval --suggest`` both build evidence here, so
the evaluation measures exactly what production hands to a provider. Runbook bodies come
from the caller: the stored corpus for the worker, the scored corpus for the evaluation.
A release-notes row that matches the incident may add runbooks retrieval left out
(:func:`with_documented_runbooks`), from the same corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rca.suggestion.context import AnalysisContext, Evidence, evidence_from_runbook, remediation

if TYPE_CHECKING:
    from rca.retrieval.hybrid import Retrieved

__all__ = [
    "JOINED_BY_ROW",
    "context_for",
    "evidence_from_retrieved",
    "joined_items",
    "stored_bodies",
    "stored_checksums",
    "stored_documented_runbooks",
    "with_documented_runbooks",
]

#: How ``Analysis.retrieved`` marks a runbook a release-notes row joined (its ``joined``).
JOINED_BY_ROW = "release-notes row"


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


def stored_checksums(slugs: Iterable[str]) -> dict[str, str]:
    """The file checksums of the stored runbooks with these slugs (one query; none asked
    when there are no slugs)."""
    from rca.models import Runbook

    wanted = list(slugs)
    if not wanted:
        return {}
    return dict(Runbook.objects.filter(slug__in=wanted).values_list("slug", "checksum"))


def stored_documented_runbooks() -> list[Evidence]:
    """The stored runbooks with a step that names a release-notes row (one query)."""
    from rca.models import Runbook
    from rca.suggestion.providers.documented_steps import DOCUMENTED_PLACEHOLDER

    rows = Runbook.objects.filter(body__contains=DOCUMENTED_PLACEHOLDER).order_by("slug")
    fields = ("slug", "title", "failure_class", "body")
    return [evidence_from_runbook(rb, 0.0, text="") for rb in rows.only(*fields)]


def with_documented_runbooks(
    ctx: AnalysisContext, corpus: Callable[[], Iterable[Evidence]]
) -> AnalysisContext:
    """``ctx`` with the runbooks a matching release-notes row reaches past retrieval added to
    its evidence (:func:`~rca.suggestion.providers.documented_steps.documented_runbooks`);
    ``corpus`` (the runbooks that name a row, as evidence) is called only when a row matches
    and no retrieved runbook answers it."""
    from rca.suggestion.providers.documented_steps import documented_runbooks
    from rca.suggestion.step_values import incident_values

    joining = documented_runbooks(ctx, incident_values(ctx), corpus)
    return replace(ctx, evidence=[*ctx.evidence, *joining]) if joining else ctx


def joined_items(joined: Iterable[Evidence]) -> list[Retrieved]:
    """The runbooks a release-notes row joined (:func:`with_documented_runbooks`), as items
    beside the ranked ones in ``Analysis.retrieved``, which the UI and the API show as the
    runbooks consulted: no chunk and no scores (retrieval did not rank them), marked
    :data:`JOINED_BY_ROW`, their steps as their text."""
    from rca.retrieval.hybrid import Retrieved

    return [
        Retrieved(
            slug=item.slug,
            title=item.title,
            failure_class=item.failure_class,
            section="",
            chunk_id=None,
            text=item.text,
            bm25=0.0,
            cosine=0.0,
            signal=0.0,
            fused=item.score,
            kind="runbook",
            joined=JOINED_BY_ROW,
        )
        for item in joined
    ]
