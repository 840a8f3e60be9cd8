"""When an occurrence reuses its issue's analysis, and which analysis answers for it.

A repeat occurrence that is materially the same as the one analysed (same error type,
same shape diff) gets no analysis of its own: it is marked done (at intake, or when the
pending analysis it joined ends: rca/queue/coalesce.py) and the issue's latest finished
analysis answers for it. The API and the UI both show that analysis and
say it was reused; this module is the one place both rules live.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.models import Incident
from rca.models import Analysis


def materially_same(a: Incident, b: Incident) -> bool:
    """Same error type and same shape diff: a new occurrence needs no new analysis."""
    return a.error_type == b.error_type and a.shape_diff == b.shape_diff


def _latest(**filters: object) -> Analysis | None:
    return (
        Analysis.objects.filter(**filters)
        .select_related("suggestion", "incident")
        .order_by("-created_at", "-pk")
        .first()
    )


def latest_finished(issue_id: int, *, excluding: int | None = None) -> Analysis | None:
    """The issue's latest finished analysis (with its incident), the one repeats reuse."""
    done = Analysis.objects.filter(issue_id=issue_id, status=Analysis.Status.DONE)
    if excluding is not None:
        done = done.exclude(incident_id=excluding)
    return done.select_related("incident").order_by("-created_at", "-pk").first()


def reusable_analysis(incident: Incident) -> Analysis | None:
    """The issue's latest finished analysis, when this occurrence is materially the same.

    An issue lives in one project (its fingerprint is unique per project), so this reuse
    never crosses projects.
    """
    previous = latest_finished(incident.issue_id, excluding=incident.pk)
    if previous is not None and materially_same(previous.incident, incident):
        return previous
    return None


@dataclass(frozen=True)
class Answer:
    """The analysis shown for an incident; `reused` when it belongs to another occurrence."""

    analysis: Analysis | None
    reused: bool

    @property
    def reused_from(self) -> int | None:
        """The incident whose analysis this one reused."""
        return self.analysis.incident_id if self.reused and self.analysis else None


def answering_analysis(incident: Incident) -> Answer:
    """The incident's own latest analysis, else (once it is done) its issue's latest one."""
    own = _latest(incident=incident)
    if own is not None:
        return Answer(own, reused=False)
    if incident.analysis_status == Incident.Analysis.DONE:
        shared = _latest(issue_id=incident.issue_id, status=Analysis.Status.DONE)
        return Answer(shared, reused=shared is not None)
    return Answer(None, reused=False)
