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

__all__ = ["said_parts", "turned_down"]

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


def _clauses(text: str) -> list[tuple[int, int]]:
    """Where each clause of ``text`` starts and ends."""
    clauses: list[tuple[int, int]] = []
    start = 0
    for match in islice(_BREAK.finditer(text), _MAX_CLAUSES):
        clauses.append((start, match.start()))
        start = match.end()
    clauses.append((start, len(text)))
    return clauses


def _said_spans(text: str) -> list[tuple[int, int, int]]:
    """Each clause's start, the end of what it says and its end."""
    spans: list[tuple[int, int, int]] = []
    for start, end in _clauses(text):
        clause = text[start:end]
        if _NEGATED_VERB.search(clause):
            spans.append((start, start, end))
        elif negation := _NEGATION.search(clause):
            spans.append((start, start + negation.start(), end))
        else:
            spans.append((start, end, end))
    return spans


def said_parts(action: str) -> list[str]:
    """The parts of ``action``'s clauses that it says, not turns down (in order)."""
    text = (action or "")[:_MAX_ACTION]
    parts = [text[start:said].strip() for start, said, _ in _said_spans(text)]
    return [part for part in parts if part]


def turned_down(action: str) -> list[tuple[int, int]]:
    """Where ``action`` turns down what it names (start, end), in order: "do not strip the
    `module.` prefix" names a prefix move it does not make."""
    text = (action or "")[:_MAX_ACTION]
    return [(said, end) for _, said, end in _said_spans(text) if said < end]
