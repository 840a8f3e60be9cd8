"""A value the message says a setting must have, and answers that set it to another.

"To use CUDA with multiprocessing, you must use the 'spawn' start method": an answer that
calls ``multiprocessing.set_start_method('fork', force=True)`` sets the start method the
message rules out and keeps the failure. :mod:`.advised_ways` reads which way a message
advises moving a number; this reads the value it requires: "you must use the 'V' <setting>"
or "<setting> must be 'V'" (the value quoted, as messages quote literals). An answer sets
the setting to another value when it calls a function whose name holds the setting's words
(``set_start_method('fork')``), assigns it (``start_method="fork"``, or an alias the
options' data names: ``VLLM_WORKER_MULTIPROC_METHOD=fork``), or says so ("use the
fork start method", "set the start method to 'fork'"), in a part it does not turn down
(:func:`.negated_clauses.turned_down`). RE2 patterns (:mod:`ingest.linear_regex`) over
bounded texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ingest.linear_regex import compile as linear
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.option_aliases import canonical
from rca.suggestion.step_options import option_key

__all__ = ["RequiredValue", "required_values", "values_against"]

_MAX_TEXT = 4000
_MAX_TEXTS = 40
_MAX_FOUND = 8
_Q = r"[`'\"]"
_VALUE = r"(?P<value>[A-Za-z0-9_.-]{1,40})"
_NOUN = r"(?P<noun>[A-Za-z][A-Za-z_]*(?:[ _-][A-Za-z][A-Za-z_]*)?)"
#: Words a two-word setting slot may end on that name no setting ("'spawn' start method to").
_TRAILING = frozenset(
    {"to", "for", "in", "with", "when", "and", "or", "if", "on", "of", "by", "instead", "as"}
    | {"from", "at", "is", "are", "be"}
)
#: The message's requirement: "you must use the 'spawn' start method", "the start method
#: must be 'spawn'".
_REQUIRED = (
    linear(
        rf"\bmust (?:use|set|pass|select|choose|be run with) (?:the |a )?{_Q}{_VALUE}{_Q}"
        rf" {_NOUN}",
        ignore_case=True,
    ),
    linear(rf"\b{_NOUN} must be (?:set to )?{_Q}{_VALUE}{_Q}", ignore_case=True),
)
#: The answer's setting: a call or an assignment naming the setting (checked by its key), or
#: prose naming it in words.
_CALL = linear(rf"(?P<name>[A-Za-z_][A-Za-z0-9_.]*)\(\s*{_Q}{_VALUE}{_Q}", ignore_case=True)
_ASSIGN = linear(
    rf"(?P<name>-{{0,2}}[A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]\s*{_Q}?{_VALUE}", ignore_case=True
)
_SAID = (
    linear(
        rf"\b(?:use|set|pass|select|choose|switch to)\s+(?:the\s+|a\s+)?{_Q}?{_VALUE}{_Q}?"
        rf"\s+{_NOUN}",
        ignore_case=True,
    ),
    linear(
        rf"\b(?:set|change|switch)\s+(?:the\s+)?{_NOUN}\s+to\s+{_Q}?{_VALUE}",
        ignore_case=True,
    ),
)


@dataclass(frozen=True)
class RequiredValue:
    """The message says the setting ``key`` (its words joined by ``_``) must be ``value``."""

    key: str
    value: str
    phrase: str


def _key(noun: str) -> str:
    words = noun.lower().replace("-", " ").replace("_", " ").split()
    while len(words) > 1 and words[-1] in _TRAILING:
        words.pop()
    return "_".join(words)


def required_values(texts: Sequence[str]) -> tuple[RequiredValue, ...]:
    """The values the message or log lines say a setting must have (a setting required at
    two values is left out)."""
    found: dict[str, RequiredValue] = {}
    mixed: set[str] = set()
    for text in list(texts)[:_MAX_TEXTS]:
        for pattern in _REQUIRED:
            for match in pattern.finditer((text or "")[:_MAX_TEXT]):
                key, value = _key(match.group("noun")), match.group("value").lower()
                if not key or key in _TRAILING:
                    continue
                if found.setdefault(key, RequiredValue(key, value, match.group(0))).value != value:
                    mixed.add(key)
    return tuple(r for key, r in found.items() if key not in mixed)[:_MAX_FOUND]


def _option(name: str) -> str:
    """The setting a name sets, through its documented aliases (``rca/knowledge/
    option-aliases.toml``: vLLM's ``VLLM_WORKER_MULTIPROC_METHOD`` is the start method)."""
    return canonical(option_key(name), None)[0]


def _set_values(text: str) -> list[tuple[str, str, bool]]:
    """(setting key, value, by name) for each setting ``text`` gives a value; ``by name``: a
    call's or an assignment's name (the setting's words may be part of it)."""
    found = [
        (_key(_option(m.group("name").rsplit(".", 1)[-1].lstrip("-"))), m.group("value"), True)
        for pattern in (_CALL, _ASSIGN)
        for m in pattern.finditer(text)
    ]
    found += [
        (_key(m.group("noun")), m.group("value"), False)
        for pattern in _SAID
        for m in pattern.finditer(text)
    ]
    return found


def values_against(action: str, required: Sequence[RequiredValue]) -> list[str]:
    """Why ``action`` sets a setting to another value than the one the message says it must
    have (empty: it does not)."""
    if not required:
        return []
    text = (action or "")[:_MAX_TEXT]
    for start, end in turned_down(text):
        text = text[:start] + " " * (end - start) + text[end:]
    reasons: list[str] = []
    for key, value, by_name in _set_values(text):
        for need in required:
            named = need.key in key if by_name else need.key == key
            if named and value.strip(".").lower() != need.value:
                words = need.key.replace("_", " ")
                reason = (
                    f"the message says {need.phrase!r}: the action sets the {words} to "
                    f"'{value.strip('.')}'"
                )
                if reason not in reasons:
                    reasons.append(reason)
    return reasons
