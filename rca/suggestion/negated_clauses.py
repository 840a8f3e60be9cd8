"""The parts of an action it says, without the parts it turns down.

"Install cuDNN 8.9.2 or newer so it matches the build; no need to update the driver" says to
install cuDNN, not to update the driver: a step whose ``says`` phrase is "update driver" is not
what it suggests (:func:`rca.suggestion.restated_steps.said_steps`). The action is cut into
clauses at ``;``, ``,``, ``:``, a full stop before a space or the end, a line break and
parentheses (brackets too), and a negation is read inside its clause only:

- from a negating word on, the clause is turned down: "do not update the driver", "never
  install 470", "avoid", "no need to", "install torch instead of (rather than, without)
  downgrading the driver"; the words before it are still said ("install torch");
- a clause whose verb is negated after what it names ("updating the NVIDIA driver does not
  help", "a new driver is not needed", "won't fix it", "is unnecessary") is turned down whole.

Each clause is searched once by two RE2 patterns (:mod:`ingest.linear_regex`), so the time is
linear in the (capped) action.
"""

from __future__ import annotations

from itertools import islice

from ingest.linear_regex import compile as linear

__all__ = ["said_parts"]

_MAX_ACTION = 4000
_MAX_CLAUSES = 400
_BREAK = linear(r"[;,:()\[\]\n]|\.(?:\s|$)")
#: A word from which the rest of its clause is turned down.
_NEGATION = linear(
    r"\b(?:not|never|no|cannot|avoid\w{0,3}|without|instead\s+of|rather\s+than|other\s+than)\b"
    r"|n['’]t\b",
    ignore_case=True,
)
#: A clause whose verb is negated after what it names: the whole clause is turned down.
_NEGATED_VERB = linear(
    r"(?:\b(?:not|cannot)|n['’]t)\s+(?:\w+\s+){0,2}?"
    r"(?:help|need|necessary|required|matter|work|fix|solve|change)\w{0,3}\b"
    r"|\b(?:unnecessary|unneeded|pointless|useless)\b",
    ignore_case=True,
)


def _clauses(text: str) -> list[str]:
    clauses: list[str] = []
    start = 0
    for match in islice(_BREAK.finditer(text), _MAX_CLAUSES):
        clauses.append(text[start : match.start()])
        start = match.end()
    clauses.append(text[start:])
    return clauses


def said_parts(action: str) -> list[str]:
    """The parts of ``action``'s clauses that it says, not turns down (in order)."""
    parts: list[str] = []
    for clause in _clauses((action or "")[:_MAX_ACTION]):
        if not clause.strip() or _NEGATED_VERB.search(clause):
            continue
        negation = _NEGATION.search(clause)
        part = (clause[: negation.start()] if negation else clause).strip()
        if part:
            parts.append(part)
    return parts
