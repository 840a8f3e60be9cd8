"""Ask the provider, validate, re-ask with the validator's complaint, fall back to offline.

A suggestion that still fails validation is returned marked invalid: never dropped, so
the engineer sees what was proposed and why it was not trusted. Either provider's answer
below the abstention threshold of :mod:`rca.suggestion.confidence` is marked abstained ("no
confident suggestion"): the offline provider decides that on its calibrated confidence, an
LLM's validated answer on the confidence it states (not calibrated: the same threshold is
applied as the simplest shared rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rca.suggestion.confidence import abstention_for, load_calibration
from rca.suggestion.context import AnalysisContext
from rca.suggestion.prompts import render
from rca.suggestion.providers import Draft, OfflineProvider, OpenAIProvider, ProviderError
from rca.suggestion.validation import Validation, validate

MAX_REASKS = 2


@dataclass
class Outcome:
    draft: Draft | None
    validation: Validation | None
    prompt: list[dict[str, str]]
    attempts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def usage(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for attempt in self.attempts:
            for key, value in (attempt.get("usage") or {}).items():
                total[key] = total.get(key, 0) + int(value or 0)
        return total


def _record(outcome: Outcome, draft: Draft, check: Validation) -> None:
    outcome.attempts.append(
        {
            "provider": draft.provider,
            "model": draft.model,
            "latency_ms": draft.latency_ms,
            "usage": draft.usage,
            "ok": check.ok,
            "complaints": check.complaints,
            "raw": draft.raw[:4000],
        }
    )


def _abstain_if_unsure(draft: Draft, ctx: AnalysisContext) -> None:
    """Mark an LLM's validated answer abstained when its stated confidence is below the
    threshold: the same rule, and the same closest runbooks and wanted evidence, as offline."""
    threshold = load_calibration().threshold
    if draft.confidence < threshold and not draft.abstained:
        draft.abstained = True
        draft.abstention = abstention_for(ctx, threshold).as_dict()


def write_suggestion(ctx: AnalysisContext, provider: OpenAIProvider | OfflineProvider) -> Outcome:
    messages = render(ctx)
    outcome = Outcome(None, None, messages)
    if isinstance(provider, OpenAIProvider):
        complaint: str | None = None
        for _ in range(1 + MAX_REASKS):
            try:
                draft = provider.suggest(
                    render(ctx, complaint=complaint) if complaint else messages
                )
            except ProviderError as exc:
                outcome.attempts.append(
                    {"provider": provider.name, "error": str(exc)[:1000], "raw": exc.raw[:4000]}
                )
                break
            check = validate(draft, ctx)
            _record(outcome, draft, check)
            outcome.draft, outcome.validation = draft, check
            if check.ok:
                _abstain_if_unsure(draft, ctx)
                return outcome
            complaint = "; ".join(check.complaints)
    try:
        draft = OfflineProvider().suggest(ctx)
    except ProviderError as exc:
        outcome.attempts.append({"provider": "offline", "error": str(exc)})
        return outcome
    check = validate(draft, ctx)
    _record(outcome, draft, check)
    outcome.draft, outcome.validation = draft, check
    return outcome
