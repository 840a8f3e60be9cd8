"""Reading a validation probe (eval/validation/*.jsonl): each line checked, its incident found
and its half named, before anything is retrieved or validated.

A line names a dev incident (``case_id``, or ``case`` in the size-limits probe) or carries its
own (``message`` and ``logs``); its answer is ``action`` / ``reason`` with a ``label`` and, when
given, the runbook ``slug`` it cites. Halves (eval/validation/README.md): the fresh probe is
split by ``sha1(case_id)``'s first hex digit (0-7 tune, 8-f hold), a line with a ``half`` field
is in that half, and any other line is in neither (``all``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "HALVES",
    "LABELS",
    "SHA1_HALVED",
    "ProbeError",
    "ProbeLine",
    "load_probe",
    "parse_line",
]

Half = Literal["tune", "hold", "all"]
#: What a reviewer said of an answer: ``right`` and ``partly`` should pass validation,
#: ``harmful`` should fail, ``harmless-wrong`` may do either (counted apart).
LABELS = ("right", "partly", "harmful", "harmless-wrong")
HALVES: tuple[Half, ...] = ("tune", "hold", "all")
#: Probe files split into halves by the hash of their case id (eval/validation/README.md).
SHA1_HALVED = ("fresh-probe.jsonl",)


class ProbeError(ValueError):
    """A probe line the scorer cannot read; the message names the line and the field."""


@dataclass(frozen=True)
class ProbeLine:
    """One labelled answer over one incident. ``incident`` is the case as
    :func:`rca.evaluation.run.case_incident` takes it; ``key`` names the incident, so lines
    over the same one share its retrieval."""

    number: int
    label: str
    action: str
    reason: str
    slug: str
    half: Half
    key: str
    incident: dict[str, Any]


def load_probe(path: str | Path) -> list[ProbeLine]:
    """Every line of a probe file, checked (:class:`ProbeError` at the first bad one)."""
    path = Path(path)
    by_hash = path.name in SHA1_HALVED
    lines = []
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                lines.append(parse_line(number, text, sha1_halves=by_hash))
    if not lines:
        raise ProbeError(f"{path} holds no probe line")
    return lines


def parse_line(number: int, text: str, *, sha1_halves: bool = False) -> ProbeLine:
    """Line ``number`` of a probe; ``sha1_halves``: its half is the hash of its case id."""
    try:
        fields = json.loads(text)
    except ValueError as exc:
        raise ProbeError(f"line {number}: not a JSON object ({exc})") from None
    if not isinstance(fields, dict):
        raise ProbeError(f"line {number}: not a JSON object")
    label = _text(fields, "label", number)
    if label not in LABELS:
        raise ProbeError(
            f"line {number}: field 'label' is {label!r}, not one of {', '.join(LABELS)}"
        )
    slug = fields.get("slug") or ""
    if not isinstance(slug, str):
        raise ProbeError(f"line {number}: field 'slug' is not a string")
    key, incident = _incident(fields, number)
    return ProbeLine(
        number=number,
        label=label,
        action=_text(fields, "action", number),
        reason=str(fields.get("reason") or ""),
        slug=slug,
        half=_half(fields, number, fields.get("case_id") if sha1_halves else None),
        key=key,
        incident=incident,
    )


def _text(fields: dict[str, Any], name: str, number: int) -> str:
    value = fields.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ProbeError(f"line {number}: field {name!r} is missing or empty")
    return value


def _incident(fields: dict[str, Any], number: int) -> tuple[str, dict[str, Any]]:
    """(key, case) of the line's incident: a dev case by id, or its own message and logs."""
    from rca.evaluation.dev_cases import dev_case

    if "message" in fields:
        message = _text(fields, "message", number)
        logs = fields.get("logs") or []
        if not isinstance(logs, list):
            raise ProbeError(f"line {number}: field 'logs' is not a list")
        case = {"id": f"line-{number}", "message": message, "logs": logs}
        return json.dumps([message, logs], sort_keys=True), case
    name = "case_id" if "case_id" in fields else "case"
    case_id = fields.get(name)
    if not isinstance(case_id, str) or not case_id:
        raise ProbeError(f"line {number}: field 'case_id' (or 'case', or 'message') is missing")
    try:
        return case_id, dev_case(case_id)
    except LookupError:
        raise ProbeError(f"line {number}: field {name!r}: {case_id!r} is not a dev case") from None


def _half(fields: dict[str, Any], number: int, case_id: Any) -> Half:
    if "half" in fields:
        half = fields["half"]
        if half not in ("tune", "hold"):
            raise ProbeError(f"line {number}: field 'half' is {half!r}, not 'tune' or 'hold'")
        return "tune" if half == "tune" else "hold"
    if isinstance(case_id, str):
        digest = hashlib.sha1(case_id.encode(), usedforsecurity=False).hexdigest()
        return "tune" if digest[0] in "01234567" else "hold"
    return "all"
