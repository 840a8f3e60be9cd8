"""What the issue page shows about one incident: stack, logs, shape-diff picture, context.

Pure shaping of stored JSON into rows the template can draw; the only queries are the
selected incident and the issue's latest occurrences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ingest.models import Incident, Issue
from ingest.parsing.shapes import incompatibility

MAX_LOGS = 200
MAX_OCCURRENCES = 20
LOG_COLUMNS = ("ts", "level", "message", "trace_id", "error_code")


def select_incident(issue: Issue, incident_id: str | None) -> Incident | None:
    """The incident named in the URL if it belongs to the issue, else the latest one."""
    incidents = issue.incidents.order_by("-received_at", "-pk")
    if incident_id and incident_id.isdigit():
        chosen = incidents.filter(pk=int(incident_id)).first()
        if chosen is not None:
            return chosen
    return incidents.first()


def occurrences(issue: Issue) -> list[Incident]:
    return list(
        issue.incidents.order_by("-received_at", "-pk").only(
            "pk", "received_at", "service", "environment", "analysis_status", "message"
        )[:MAX_OCCURRENCES]
    )


@dataclass
class FrameBlock:
    """Consecutive frames that are all the service's own code, or all library code."""

    in_app: bool
    frames: list[dict] = field(default_factory=list)


def stack_blocks(frames: list[dict]) -> list[FrameBlock]:
    blocks: list[FrameBlock] = []
    for frame in frames:
        in_app = bool(frame.get("in_app"))
        if not blocks or blocks[-1].in_app != in_app:
            blocks.append(FrameBlock(in_app))
        blocks[-1].frames.append(frame)
    return blocks


def exceptions(incident: Incident) -> list[dict[str, Any]]:
    """The chain, outermost (the one finally raised) first, each with its frame blocks."""
    chain = []
    for exc in reversed(incident.exceptions or []):
        chain.append(
            {
                "type": exc.get("type", ""),
                "message": exc.get("message", ""),
                "relation": exc.get("relation", ""),
                "blocks": stack_blocks(exc.get("frames") or []),
            }
        )
    return chain


def log_rows(incident: Incident) -> list[dict[str, Any]]:
    rows = []
    for entry in (incident.logs or [])[:MAX_LOGS]:
        if isinstance(entry, dict):
            rows.append({column: entry.get(column) or "" for column in LOG_COLUMNS})
        else:
            rows.append({"message": str(entry)})
    return rows


@dataclass
class Dim:
    expected: int | None
    actual: int | None
    mismatch: bool


@dataclass
class ShapeRow:
    tensor: str
    op: str
    dims: list[Dim]
    rank_change: bool
    score: float


def _known(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def shape_rows(incident: Incident) -> list[ShapeRow]:
    """Per tensor, expected vs actual dims side by side, mismatches marked, with the score.

    Unknown dims (None) match anything; a rank change marks every position.
    """
    rows = []
    for diff in incident.shape_diff or []:
        expected = list(diff.get("expected") or [])
        actual = list(diff.get("actual") or [])
        rank_change = len(expected) != len(actual)
        dims = []
        for i in range(max(len(expected), len(actual))):
            want = expected[i] if i < len(expected) else None
            got = actual[i] if i < len(actual) else None
            differs = _known(want) and _known(got) and want != got
            dims.append(Dim(want, got, rank_change or differs))
        rows.append(
            ShapeRow(
                tensor=diff.get("tensor") or "",
                op=diff.get("op") or "",
                dims=dims,
                rank_change=rank_change,
                score=incompatibility(diff),
            )
        )
    return rows
