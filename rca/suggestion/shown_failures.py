"""What the incident shows failing, reused as the answer's target, for the premise check
(:func:`rca.suggestion.premises.premise_complaints`): the checks of :mod:`.reused_failing`
(a shape, object, argument, runtime release or placement the message shows failing),
:mod:`.untrained_layers` (a non-strict load over learned weights the message lists missing)
and :mod:`.config_dimensions` (a pretrained model's dimensions changed in its
configuration)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from rca.suggestion.config_dimensions import config_dimension_violations
from rca.suggestion.reused_failing import failing_value_violations
from rca.suggestion.untrained_layers import missing_layer_violations

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = ["failure_harms"]

_MAX_SCAN = 4000


class _Answer(Protocol):
    action: str
    reason: str


def failure_harms(draft: _Answer, ctx: AnalysisContext, facts: Iterable[str]) -> list[str]:
    """Why the answer makes its target what the incident shows failing (empty: it does not)."""
    action, reason = (draft.action or "")[:_MAX_SCAN], (draft.reason or "")[:_MAX_SCAN]
    return [
        *failing_value_violations(action, ctx),
        *missing_layer_violations(action, reason, ctx.message or ""),
        *config_dimension_violations(action, reason, facts),
    ]
