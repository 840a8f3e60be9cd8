"""Values of the incident that a runbook step may name as placeholders, and their filling.

A step can say "Set `in_features` to the actual flattened size ({actual-size})": the
offline composer and the prompt show it with this incident's number. A placeholder the
incident gives no value for is dropped with the parenthetical aside around it; one that
cannot be dropped stays, and validation rejects it (:mod:`.checks.placeholders`), so no
suggestion carries an unfilled template.

``actual-size`` / ``expected-size``
    The first dimension where the first shape diff's actual shape differs from the expected
    one (for a matmul, the input's features and the layer's ``in_features``).
``key-prefix``
    The prefix by which the listed state_dict keys differ (``module.``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rca.suggestion.incident_facts import key_prefix

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = ["VALUE_NAMES", "fill_values", "incident_values"]

VALUE_NAMES = frozenset({"actual-size", "expected-size", "key-prefix"})
# Runbook text only (operator-shipped steps), short: plain re is fine.
_PLACEHOLDER = re.compile(r"\{([a-z][a-z-]*)\}")


def incident_values(ctx: AnalysisContext) -> dict[str, str]:
    """The placeholder values this incident gives."""
    values: dict[str, str] = {}
    for diff in ctx.shape_diff[:1]:
        expected, actual = diff.get("expected") or [], diff.get("actual") or []
        for e, a in zip(reversed(expected), reversed(actual), strict=False):
            if e is not None and a is not None and e != a:
                values["expected-size"], values["actual-size"] = str(e), str(a)
                break
    if prefix := key_prefix(ctx.message or ""):
        values["key-prefix"] = prefix
    return values


def _enclosing_aside(text: str, at: int) -> tuple[int, int] | None:
    """The span of the innermost "(...)" around ``at`` (with the spaces before it)."""
    depth, start = 0, -1
    for i in range(at - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            if depth == 0:
                start = i
                break
            depth -= 1
    if start < 0:
        return None
    depth = 0
    for j in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return len(text[:start].rstrip()), j + 1
    return None


def fill_values(step: str, values: dict[str, str]) -> str:
    """``step`` with its placeholders filled from ``values``; an aside holding one that has
    no value is dropped. Asides go first and values are put in by one substitution, so an
    incident value that itself looks like a placeholder is never read as one."""
    start = 0
    while match := _PLACEHOLDER.search(step, start):
        name = match.group(1)
        span = (
            None
            if name in values or name not in VALUE_NAMES
            else _enclosing_aside(step, match.start())
        )
        if span is None:
            start = match.end()  # filled below, or left for validation to reject
            continue
        step = step[: span[0]] + step[span[1] :]
        start = span[0]

    def value(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return _PLACEHOLDER.sub(value, step)
