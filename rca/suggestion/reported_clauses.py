"""The parts of an action that report what is, not what to do.

"Pass `--dtype float16` since the T4 has compute capability 7.5" sets the dtype; the GPU's
capability is quoted as the reason, not a value the action gives it. A limit reader
(:mod:`.limit_moves`) that took "compute capability 7.5" there as a move would reject the
right answer for quoting the message back. A report is:

- a clause a reason word opens ("because", "since", "given (that)", "as" with a verb of being
  or having in its next words: "as the T4 only has ..."), to the clause's end or to a new
  verb a coordinating word introduces ("..., and load it in bfloat16" is said again:
  :func:`.negated_clauses.governed_end`);
- a statement: a clause after ``;``, ``:`` or a dash, or an aside in parentheses, that opens
  with a determiner or a pronoun ("; the T4 (compute capability 7.5) lacks bfloat16",
  "(the Tesla T4 is compute capability 7.5)"), not with a verb, and that states what is: one
  with a modal or a directive ("the model should use IR version 11", "the fix is
  `model.ir_version = 11`", a ``=`` assignment) prescribes a value, so it stays said.

A reason clause also ends at a comma an imperative verb follows ("Since the runtime is old,
set ..."): the verbs are data (``rca/knowledge/imperative-verbs.toml``).

:func:`without_reports` blanks them (same length, so offsets hold). Linear time: RE2
patterns (:mod:`ingest.linear_regex`) over a capped action, a bounded number of searches.
"""

from __future__ import annotations

from ingest.linear_regex import compile as linear
from rca.suggestion.imperative_verbs import IMPERATIVE_VERBS
from rca.suggestion.negated_clauses import governed_end

__all__ = ["without_reports"]

_MAX_ACTION = 4000
_MAX_REPORTS = 16
_REASON = linear(
    r"\b(?:because|since|given(?:\s+that)?)\b"
    r"|\bas\s+(?:\w+\s+){0,3}?(?:has|have|had|is|are|was|were|lacks?|reports?|shows?|only"
    r"|cannot|does|doesn['’]t|supports?)\b",
    ignore_case=True,
)
_STATEMENT = linear(
    r"(?:[;:(]|\s[-–—]\s)\s*(?:the|your|its|this|that|these|those|it|my|our|their|a|an)\b",
    ignore_case=True,
)
_CLAUSE_END = linear(r";|\.(?:\s|$)")
_ASIDE_END = linear(r"\)")
#: What makes a statement prescribe rather than report: a modal, "the fix is", an
#: assignment, or a directive verb not under a negation ("the T4 cannot use bfloat16" reports).
_PRESCRIBES = linear(
    r"\b(?:should|must|ought|needs?\s+to|has\s+to|have\s+to|had\s+better"
    r"|(?:fix|solution|remedy|answer|right\s+value|correct\s+value|way\s+out)\s+(?:is|would\s+be))\b"
    r"|[\w\])]\s*=\s*[\w'\"]",
    ignore_case=True,
)
_DIRECTIVE = linear(r"(\w+['’]?\w*)?\s+(?:set|use|change)\b", ignore_case=True)
_NEGATING = frozenset({"cannot", "can't", "can’t", "not", "doesn't", "doesn’t", "won't", "never"})


def _verbs() -> str:
    """The verbs as one alternation, longest first so a hyphenated verb is not cut at its hyphen."""
    verbs = sorted(IMPERATIVE_VERBS, key=len)
    return "|".join(verb.replace("-", r"\-") for verb in reversed(verbs))


#: A comma an imperative follows: the reason clause before it ends there.
_COMMA_IMPERATIVE = linear(
    r",\s*(?:then\s+|just\s+|simply\s+)?(?:" + _verbs() + r")\b", ignore_case=True
)


def _prescribes(statement: str) -> bool:
    """Whether a statement carries a modal or a directive, so it says what to do."""
    if _PRESCRIBES.search(statement) is not None:
        return True
    for match in _DIRECTIVE.finditer(statement):
        if (match.group(1) or "").lower() not in _NEGATING:
            return True
    return False


def _end(text: str, start: int, aside: bool) -> int:
    """Where a report opening at ``start`` ends: inside parentheses at the ``)``; else at
    the clause's end or a new verb a coordinating word introduces."""
    stop = _CLAUSE_END.search(text, start)
    end = stop.start() if stop is not None else len(text)
    if (comma := _COMMA_IMPERATIVE.search(text[:end], start)) is not None:
        end = comma.start()
    if aside or text.count("(", 0, start) > text.count(")", 0, start):
        close = _ASIDE_END.search(text, start)
        return min(end, close.start()) if close is not None else end
    return governed_end(text[:end], start)


def without_reports(action: str) -> str:
    """``action`` (capped) with its reports blanked out."""
    text = (action or "")[:_MAX_ACTION]
    spans: list[tuple[int, int]] = []
    position = 0
    for _ in range(_MAX_REPORTS):
        reason, statement = _REASON.search(text, position), _STATEMENT.search(text, position)
        found = min(
            (m for m in (reason, statement) if m is not None), key=lambda m: m.start(), default=None
        )
        if found is None:
            break
        aside = found is statement and found.group(0).lstrip()[:1] == "("
        start = found.start() + (len(found.group(0)) - len(found.group(0).lstrip()[1:]))
        end = max(_end(text, found.end(), aside), found.end())
        if found is statement and _prescribes(text[found.start() : end]):
            position = end + 1
            continue
        spans.append((start if found is statement else found.start(), end))
        position = end + 1
    out = list(text)
    for start, end in spans:
        out[start:end] = " " * (end - start)
    return "".join(out)
