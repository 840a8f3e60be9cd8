"""The network-free provider: the best-fitting runbook step, worded for this incident.

Only the assembly of the :class:`Draft` is here; the choice of step is :mod:`.step_ranking`
(with the runbooks' ``Applies:`` metadata), its wording :mod:`.wording`, every weight
:mod:`.offline_weights`, and the confidence (calibrated on the dev cases) and the decision to
abstain :mod:`rca.suggestion.confidence`.
"""

from __future__ import annotations

import json
import time

from rca.suggestion.confidence import Calibration, abstention_for, load_calibration, strength
from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.providers.draft import OFFLINE_MODEL, Draft, ProviderError
from rca.suggestion.providers.offline_weights import WEIGHTS
from rca.suggestion.providers.step_ranking import Candidate, rank_steps
from rca.suggestion.providers.wording import compose
from rca.suggestion.validation import MAX_REASON_CHARS, validate


def _alternative(ranked: list[Candidate]) -> Candidate | None:
    """The next best step that is a different fix, not a rewording of the chosen one.

    Never the message's own advice: a runbook step that ranks above it is mostly that
    advice in the runbook's words (on dev, all 3 runner-up advice steps restated the chosen
    action), which the reason's quote of the message does not need twice."""
    chosen = ranked[0]
    for candidate in ranked[1:]:
        if candidate.advice:
            continue
        words = candidate.action_tokens
        if not words:
            continue
        if len(words & chosen.action_tokens) / len(words) <= WEIGHTS.alternative_overlap:
            return candidate
    return None


class OfflineProvider:
    """Deterministic, network-free suggestions from the retrieved runbooks' remediation.

    Of the steps of the top runbook (and of same-class runbooks ranked nearly as high), the
    one that best fits the incident (its code and logs, training vs serving, its framework,
    its shapes) and whose suggestion validates becomes the action; its stated reason plus
    the incident's specifics (mismatched dimensions, dtypes or devices, the failing in-app
    frame) become the reason. The cited runbook is the one the step comes from.
    """

    name = "offline"
    model = OFFLINE_MODEL

    def __init__(self, calibration: Calibration | None = None) -> None:
        self.calibration = calibration

    def suggest(self, ctx: AnalysisContext) -> Draft:
        started = time.monotonic()
        top = ctx.top_runbook or (ctx.evidence[0] if ctx.evidence else None)
        if top is None:
            raise ProviderError("no runbook was retrieved: nothing to base a suggestion on")
        ranked = rank_steps(ctx)
        if ranked:
            source, (action, reason) = ranked[0].evidence, (ranked[0].action, ranked[0].reason)
            reason = self._with_alternative(action, reason, source, ranked, ctx)
        else:
            # No step of the candidate runbooks survives its premises and validation: there
            # is no fix to give. The draft points at the runbook, abstains, and fails
            # validation as a fix (checks.placeholders), so it is only a labelled hint.
            source = top
            action, reason = compose(
                top, f"Apply the remediation of the runbook '{top.title}'", "", ctx
            )
        calibration = self.calibration or load_calibration()
        figures = strength(ctx, ranked)
        confidence = calibration.probability(figures)
        if ranked and ranked[0].advice:  # see OfflineWeights.advice_confidence_cap
            confidence = min(confidence, WEIGHTS.advice_confidence_cap)
        draft = Draft(
            action=action,
            reason=reason,
            runbook=source.slug,
            confidence=confidence,
            provider=self.name,
            model=self.model,
            strength=figures.as_dict(),
        )
        if confidence < calibration.threshold or not ranked:
            # No confident suggestion: the best guess stays in action/reason (validated like
            # any answer, shown only as a labelled low-confidence guess) and the abstention
            # says which runbooks came closest and what evidence would help.
            draft.abstained = True
            draft.abstention = abstention_for(ctx, calibration.threshold).as_dict()
        raw = {
            "action": draft.action,
            "reason": draft.reason,
            "runbook": draft.runbook,
            "confidence": confidence,
            "abstained": draft.abstained,
        }
        draft.raw = json.dumps(raw, sort_keys=True)
        draft.latency_ms = int((time.monotonic() - started) * 1000)
        return draft

    def _with_alternative(
        self,
        action: str,
        reason: str,
        source: Evidence,
        ranked: list[Candidate],
        ctx: AnalysisContext,
    ) -> str:
        """The reason, plus the runner-up fix when it fits and the suggestion still validates.

        An engineer whose setup rules out the first fix (the batch size is fixed by the
        client, say) gets the next one at once instead of a second round trip.
        """
        alternative = _alternative(ranked)
        if alternative is None:
            return reason
        longer = f"{reason} If that does not apply: {alternative.action}"
        if len(longer) > MAX_REASON_CHARS:
            return reason
        draft = Draft(action, longer, source.slug, 0.5, self.name, self.model)
        return longer if validate(draft, ctx).ok else reason
