"""The analysis panel of an incident: live status, the suggestion card, history, evidence.

A suggestion below the calibrated confidence threshold is shown as "No confident
suggestion" with the closest runbooks (titles from the corpus) and the evidence that would
help; its best guess only inside a labelled low-confidence disclosure.

Polling continues only while the incident is pending or being analysed, so a finished
panel stops asking the server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ingest.models import Incident, Issue
from rca.models import Analysis, Decision, Suggestion
from rca.queue import claim
from rca.reuse import answering_analysis

MAX_DIM_SHARE = 0.3
MIN_STACK_MATCH = 0.92
ACTIVE = (Incident.Analysis.PENDING, Incident.Analysis.ANALYZING)
MAX_POLLS = 300  # one a second: after five minutes the page says so instead of asking on


@dataclass
class Panel:
    incident: Incident
    analysis: Analysis | None
    suggestion: Suggestion | None
    decisions: list[Decision] = field(default_factory=list)
    runbooks: list[dict[str, Any]] = field(default_factory=list)
    past_fixes: list[dict[str, Any]] = field(default_factory=list)
    badges: list[dict[str, Any]] = field(default_factory=list)
    awaiting: int | None = None  # re-analysis requested after this analysis id
    polls: int = 0
    reused_from: int | None = None  # the occurrence whose analysis this one reused

    @property
    def abstention(self) -> dict[str, Any] | None:
        """For a suggestion without confidence: {closest: [{slug, title}], wanted, threshold}."""
        if self.suggestion is None or not self.suggestion.abstained:
            return None
        data = self.suggestion.abstention if isinstance(self.suggestion.abstention, dict) else {}
        closest = [
            {"slug": str(item.get("slug", "")), "title": str(item.get("title") or item.get("slug"))}
            for item in data.get("closest") or []
            if isinstance(item, dict) and item.get("slug")
        ]
        wanted = [str(item) for item in data.get("wanted") or []]
        return {"closest": closest, "wanted": wanted, "threshold": data.get("threshold")}

    @property
    def waiting(self) -> bool:
        """Work is queued or running: the incident is pending/analysing, or a re-analysis
        was requested and no newer analysis exists yet."""
        if self.incident.analysis_status in ACTIVE:
            return True
        newest = self.analysis.pk if self.analysis else 0
        return self.awaiting is not None and newest <= self.awaiting

    @property
    def attempts(self) -> int:
        """Attempts made (at least one once failed: rows older than the count had none)."""
        failed = self.incident.analysis_status == Incident.Analysis.FAILED
        return max(self.incident.analysis_attempts, 1 if failed else 0)

    @property
    def max_attempts(self) -> int:
        return claim.max_attempts()

    @property
    def error(self) -> str:
        """The last failed attempt's error (the incident keeps it even when no Analysis
        row was written, e.g. the worker was killed)."""
        return self.incident.analysis_error or (self.analysis.error if self.analysis else "")

    @property
    def retrying(self) -> bool:
        """A failed attempt is waiting for its retry."""
        return self.incident.analysis_status in ACTIVE and bool(self.incident.analysis_error)

    @property
    def polling(self) -> bool:
        return self.waiting and self.polls < MAX_POLLS

    @property
    def next_poll(self) -> str:
        after = f"&after={self.awaiting}" if self.awaiting is not None else ""
        return f"?polls={self.polls + 1}{after}"


def _badges(validation: dict[str, Any]) -> list[dict[str, Any]]:
    """Validation checks as pass/fail badges with the figures behind them."""
    if not validation:
        return []
    match = validation.get("stack_path_match")
    unknown = validation.get("unknown_dim_share") or 0.0
    shape = validation.get("shape_incompatibility")
    # Records written before the URL rule have no such key: they carry no verdict on links.
    links = (
        [{"label": "links", "ok": bool(validation["urls_grounded"]), "detail": "from runbook"}]
        if "urls_grounded" in validation
        else []
    )
    return [
        {"label": "format", "ok": bool(validation.get("format_ok")), "detail": ""},
        {"label": "grounded", "ok": bool(validation.get("grounded")), "detail": ""},
        *links,
        {
            "label": "stack path",
            "ok": match is not None and match >= MIN_STACK_MATCH,
            "detail": f"{match:.0%}" if match is not None else "n/a",
        },
        {
            "label": "shape check",
            "ok": unknown <= MAX_DIM_SHARE,
            "detail": f"incompat. {shape:.2f}" if shape is not None else "no diff",
        },
    ]


def _same_project(incident: Incident, fixes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Past fixes from this incident's project only: another project's text is not ours to show."""
    ids = {fix.get("issue_id") for fix in fixes if isinstance(fix.get("issue_id"), int)}
    if not ids:
        return []
    mine = set(
        Issue.objects.filter(
            pk__in=[i for i in ids if i is not None], project_id=incident.project_id
        ).values_list("pk", flat=True)
    )
    return [fix for fix in fixes if fix.get("issue_id") in mine]


def panel(incident: Incident, awaiting: int | None = None, polls: int = 0) -> Panel:
    """The analysis answering for the incident (its own, or the one it reused from an
    earlier occurrence of its issue) with its suggestion and decision history."""
    answer = answering_analysis(incident)
    analysis = answer.analysis
    suggestion = getattr(analysis, "suggestion", None) if analysis else None
    result = Panel(
        incident=incident,
        analysis=analysis,
        suggestion=suggestion,
        awaiting=awaiting,
        polls=polls,
        reused_from=answer.reused_from,
    )
    if analysis is not None:
        retrieved = [item for item in analysis.retrieved or [] if isinstance(item, dict)]
        result.runbooks = [item for item in retrieved if item.get("kind", "runbook") == "runbook"]
        result.past_fixes = _same_project(
            incident, [item for item in retrieved if item.get("kind") == "past_fix"]
        )
    if suggestion is not None:
        result.decisions = list(
            suggestion.decisions.select_related("user").order_by("-created_at", "-pk")
        )
        result.badges = _badges(suggestion.validation or {})
    return result
