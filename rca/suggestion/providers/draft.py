"""What every provider returns (a :class:`Draft`) or raises, and how a model's text becomes one.

Shared by both providers and by :mod:`rca.suggestion.suggest`, so it depends on neither provider.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ingest.linear_regex import compile as linear
from ingest.storable import storable_text

DEFAULT_MODEL = "gpt-4o-mini"
OFFLINE_MODEL = "runbook-remediation-1"


@dataclass
class Draft:
    """One provider answer, before validation; ``raw`` is exactly what the provider said.

    ``abstained``: the provider has no confident suggestion (``confidence`` is below the
    calibrated threshold of :mod:`rca.suggestion.confidence`); ``action`` and ``reason`` are
    then only its best guess, and ``abstention`` holds the closest runbooks and the evidence
    that would help. ``strength``: the raw evidence figures the confidence came from.
    """

    action: str
    reason: str
    runbook: str
    confidence: float
    provider: str
    model: str
    raw: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: int = 0
    abstained: bool = False
    abstention: dict[str, Any] = field(default_factory=dict)
    strength: dict[str, float] = field(default_factory=dict)


class ProviderError(Exception):
    """The provider gave no usable answer; ``raw`` keeps what it said, for the record."""

    def __init__(self, message: str, *, status: int | None = None, raw: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.raw = raw


# --------------------------------------------------------------------------- parsing

_FENCE = linear(r"```(?:json|JSON)?\s*\n?(.*?)```", dotall=True)


def _as_answer(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and any(str(key).lower() == "action" for key in value):
        return {str(key).lower(): item for key, item in value.items()}
    return None


def parse_answer(text: str) -> dict[str, Any]:
    """Find the answer object in what a model said: bare JSON, a code fence, or JSON in prose.

    Servers without JSON mode (and chatty models) wrap the object in fences or sentences;
    we take the first object that has an ``action`` key. Keys are lower-cased.
    """
    if not isinstance(text, str) or not text.strip():
        raise ProviderError("the model returned an empty answer", raw=text or "")
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            answer = _as_answer(json.loads(candidate))
        except (ValueError, RecursionError):
            continue
        if answer is not None:
            return answer
    decoder = json.JSONDecoder()
    for start in (i for i, char in enumerate(text) if char == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        answer = _as_answer(value)
        if answer is not None:
            return answer
    raise ProviderError(
        f'no JSON object with an "action" key found in the answer: {text.strip()[:120]!r}',
        raw=text,
    )


def _confidence(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.5
    if number != number:  # NaN
        return 0.5
    if 1 < number <= 100:
        number /= 100  # "85" meaning 85%
    return round(min(max(number, 0.0), 1.0), 3)


def draft_from_answer(answer: dict[str, Any], **meta: Any) -> Draft:
    def text(key: str) -> str:
        # Model output is untrusted text like incident content: PostgreSQL stores no NULs
        # (a JSON `\u0000` becomes one once parsed).
        value = answer.get(key)
        return storable_text(value).strip() if isinstance(value, str) else ""

    if not text("action") or not text("reason"):
        raise ProviderError('the answer lacks a non-empty "action" or "reason"', raw=meta["raw"])
    return Draft(
        action=text("action"),
        reason=text("reason"),
        runbook=text("runbook"),
        confidence=_confidence(answer.get("confidence")),
        **meta,
    )
