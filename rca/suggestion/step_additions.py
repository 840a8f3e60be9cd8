"""The values a step adds to a list option, read from its own words.

"Add `CUDAExecutionProvider` to `providers`", "include q_proj and v_proj in
`target_modules`": the step names one option, the list, and the values it puts in it. Such a
step is already done when the incident shows that list holding them all
(:mod:`rca.suggestion.premises`, :func:`rca.suggestion.shown_options.list_items`). The values
are code spans, quoted words or identifiers shaped like values (``q_proj``,
``CUDAExecutionProvider``, ``0``), never plain words: "add a batch dimension to the input"
adds nothing to an option. A flag or ``KEY=1`` added "to the command" or "to the
environment" is an option in its own right (:mod:`rca.suggestion.step_options`), not a list
value.

Linear time: RE2 patterns (:mod:`ingest.linear_regex`) with bounded repeats, and at most
:data:`_MAX_ADDS` clauses.
"""

from __future__ import annotations

from ingest.linear_regex import compile as linear

__all__ = ["additions"]

_IDENT = linear(r"^(?P<name>[A-Za-z_][A-Za-z0-9_.]*)$")
#: "add <values> to <option>": the values (up to the first "to"/"in"/"into") and the list.
_ADD = linear(
    r"\b(?:add|append|prepend|include|insert)\s+(?P<items>[^.;:\n]{1,200}?)\s+(?:to|in|into)\s+"
    r"(?:the\s+)?(?:(?:[\w-]+\s+){0,2}[\w-]+'s\s+)?"
    r"(?:`(?P<code>[^`\n]{1,80})`|(?P<word>-{0,2}[A-Za-z_][\w.-]*))",
    ignore_case=True,
)
_ITEM = linear(r"`(?P<code>[^`\n]{1,200})`|[\"'](?P<quoted>[^\"'\n]{1,80})[\"']|(?P<word>[\w.:-]+)")
#: A bare word that is a value, not English: ``q_proj``, ``CUDAExecutionProvider``, ``0``.
_VALUE_WORD = linear(r"^(?:[\w.:-]*(?:_|\d)[\w.:-]*|[A-Za-z][a-z0-9]*[A-Z][\w.:-]*)$")
_MAX_ADDS = 8


def _added_items(items: str) -> tuple[str, ...]:
    """The values an "add ... to" clause names, compared as shown lists are
    (:func:`rca.suggestion.shown_options.list_items`): lower case, no quotes or brackets."""
    found: list[str] = []
    for match in _ITEM.finditer(items):
        if match.group("code") is not None:
            parts = match.group("code").strip("[]() ").split(",")
        elif match.group("quoted") is not None:
            parts = [match.group("quoted")]
        elif _VALUE_WORD.match(match.group("word")):
            parts = [match.group("word")]
        else:
            continue
        found += [p.strip().strip("'\"` ").lower() for p in parts if p.strip().strip("'\"` ")]
    return tuple(found)


def additions(text: str) -> list[tuple[int, int, str, tuple[str, ...]]]:
    """Each "add <values> to <option>" clause: where its values start, where the clause
    ends, the option's name as written and the values it adds (at most :data:`_MAX_ADDS`)."""
    found: list[tuple[int, int, str, tuple[str, ...]]] = []
    for match in _ADD.finditer(text):
        items = _added_items(match.group("items"))
        name = match.group("code") or match.group("word") or ""
        # A flag or ``KEY=1`` is an option itself ("add `--trust-remote-code` to the command").
        flags = any(item.startswith("-") or "=" in item for item in items)
        if not items or flags or not _IDENT.match(name.strip().lstrip("-")):
            continue
        found.append((match.start(1), match.end(), name.strip().rstrip("."), items))  # 1: items
        if len(found) >= _MAX_ADDS:
            break
    return found
