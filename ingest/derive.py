"""Derive what grouping and analysis need from a scrubbed payload (pure: no database).

Parsing never rejects an incident: whatever cannot be understood is kept raw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ingest.grouping import culprit, fingerprint, issue_title
from ingest.parsing.frames import ParsedException, frames_from_json
from ingest.parsing.logs import LogEntry, parse_logs
from ingest.parsing.shapes import extract_shape_diff, normalise_shape_diff
from ingest.parsing.stacktrace import parse_stacktrace


@dataclass
class Derived:
    exceptions: list[ParsedException]
    logs: list[LogEntry]
    shape_diff: list[dict[str, Any]]
    shape_diff_source: str
    error_type: str
    message: str
    fingerprint: str
    title: str
    culprit: str
    model_id: str
    extra: dict[str, Any] = field(default_factory=dict)


def _exception_chain(stacktrace: Any) -> list[ParsedException]:
    """Text, a list of frames, or a list of exceptions (`{type, message, frames}`)."""
    if (
        isinstance(stacktrace, list)
        and stacktrace
        and all(isinstance(item, dict) and "frames" in item for item in stacktrace)
    ):
        return [
            ParsedException(
                type=str(item.get("type") or ""),
                message=str(item.get("message") or ""),
                frames=frames_from_json(item.get("frames") or []),
                relation=item.get("relation")
                if item.get("relation") in ("cause", "context")
                else None,
            )
            for item in stacktrace
        ]
    return parse_stacktrace(stacktrace)


def derive(payload: dict[str, Any]) -> Derived:
    chain = _exception_chain(payload.get("stacktrace"))
    raised = chain[-1] if chain else None
    error_type = payload.get("error_type") or (raised["type"] if raised else "")
    message = payload.get("message") or (raised["message"] if raised else "")
    frames = raised["frames"] if raised else []

    sent = normalise_shape_diff(payload.get("shape_diff") or [])
    shapes = sent or extract_shape_diff(message)
    if not shapes:  # the raised message may differ from the one the client summarised
        shapes = next((d for e in reversed(chain) if (d := extract_shape_diff(e["message"]))), [])
    source = "sent" if sent else ("extracted" if shapes else "")

    context = payload.get("inference_context") or {}
    return Derived(
        exceptions=chain,
        logs=parse_logs(payload.get("logs") or []),
        shape_diff=[dict(d) for d in shapes],
        shape_diff_source=source,
        error_type=str(error_type)[:255],
        message=str(message),
        fingerprint=fingerprint(error_type, frames, message, payload.get("fingerprint")),
        title=issue_title(error_type, message)[:255],
        culprit=culprit(frames)[:255],
        model_id=str(context.get("model_id") or "")[:200],
    )
