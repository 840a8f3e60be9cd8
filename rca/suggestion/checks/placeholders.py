"""Template remnants in a suggestion: placeholders a composer or a model left unfilled.

A runbook step may name a value of the incident as ``{actual-size}``
(:mod:`rca.suggestion.step_values` fills it); one left unfilled, prose that points at a
symbol instead of giving its value ("the K1 in the message"), a ``<value>`` left in prose,
or an action that points at a runbook's remediation instead of giving a step ("Apply the
remediation of the runbook ...", the offline provider's words when no step survives its
premises) tells the engineer nothing. Code in backticks is left alone (``f"{name}"`` is
code, not a placeholder; ``torchrun --nproc_per_node=<gpus>`` is a command template).
"""

from __future__ import annotations

import re

from rca.suggestion.checks import MAX_SCAN_CHARS

__all__ = ["template_remnants"]

_CODE = re.compile(r"`[^`]*`")
_REMNANTS = (
    re.compile(r"\$?\{\{?\s*[A-Za-z][\w.-]*\s*\}?\}"),  # {name}, {{ name }}, ${NAME}
    # "the K1 in the message": a symbol (letter + digit, or one capital) pointed at, not given
    re.compile(
        r"\bthe\s+(?:[A-Z]\d*|[A-Za-z]+\d+)\s+(?:in|from|of)\s+the\s+"
        r"(?:message|error|log|logs|traceback|trace)\b"
    ),
    re.compile(r"\b(?:TODO|FIXME|TBD|XXX)\b"),
    re.compile(r"<(?:placeholder|value|name|path|slug|number|n)>", re.IGNORECASE),
    # "<free ids>", "<model>" in prose; not Python's reprs ("<lambda>", "<module '...'>")
    # nor IPython's cell file names ("<ipython-input-4-2da0ffaf5447>", a frame's file)
    re.compile(
        r"(?<![\w<])<(?!(?:lambda|locals|module|function|genexpr|listcomp|stdin|string"
        r"|ipython-input)\b)"
        r"[a-z][a-z0-9 ._-]{0,30}>"
    ),
    # pointing at a runbook's remediation instead of naming a step
    re.compile(
        r"\b(?:apply|follow|use|see|do|try|read|perform|take)\s+(?:the\s+|its\s+)?"
        r"(?:remediation|fix|fixes|steps?|instructions?|guidance|advice)\s+(?:of|in|from)\s+"
        r"(?:the\s+|this\s+)?runbooks?\b",
        re.IGNORECASE,
    ),
)


#: A runbook placeholder inside a code span (``{missing-name}``): hyphenated, so never code.
_STEP_PLACEHOLDER = re.compile(r"\{[a-z]+(?:-[a-z]+)+\}")


def template_remnants(text: str) -> list[str]:
    """The unfilled placeholders in ``text`` (outside code spans, and runbook placeholders
    inside them), in order."""
    scanned = text[:MAX_SCAN_CHARS]
    prose = _CODE.sub(" ", scanned)
    found: list[str] = []
    for span in _CODE.finditer(scanned):
        found.extend(_STEP_PLACEHOLDER.findall(span.group(0)))
    for pattern in _REMNANTS:
        found.extend(match.group(0) for match in pattern.finditer(prose))
    return list(dict.fromkeys(found))
