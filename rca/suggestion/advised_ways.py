"""Which way a message advises moving an option, and answers that move it the other way.

vLLM says "The model's max seq len (32768) is larger than the maximum number of tokens that
can be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing
`max_model_len`". "Increase `--max-model-len` to 65536" moves the option against the
message's own advice and makes the error worse. The message side is any "increase/raise X" or
"decrease/reduce/lower X" (any form: "try increasing", "please reduce") naming an option; the
answer side is the opposite verb on the same option in a part the answer says (not turns
down: :func:`.negated_clauses.said_parts`). Option names are compared by
:func:`.step_options.option_key` (``--max-model-len`` is ``max_model_len``). RE2 patterns
(:mod:`ingest.linear_regex`) over bounded texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear
from rca.suggestion.code_span_options import option_like
from rca.suggestion.negated_clauses import said_parts
from rca.suggestion.step_options import option_key

__all__ = ["advised_ways", "moves_against_advice"]

_MAX_TEXT = 4000
_MAX_TEXTS = 40
_MAX_FOUND = 16
_NAME = r"`?(?P<name>-{0,2}[A-Za-z_][\w.-]*[A-Za-z0-9_])`?"
_OBJECT = r"\s+(?:the\s+)?(?:value\s+of\s+)?(?:option\s+|flag\s+|parameter\s+)?" + _NAME
_ADVISED = linear(
    r"\b(?:(?P<up>increas(?:e|es|ing)|rais(?:e|es|ing)|bump(?:s|ing)?)"
    r"|(?P<down>decreas(?:e|es|ing)|reduc(?:e|es|ing)|lower(?:s|ing)?))" + _OBJECT,
    ignore_case=True,
)
_MOVED = linear(
    r"\b(?:(?P<up>increase|raise|bump|double|grow|enlarge|extend)"
    r"|(?P<down>decrease|reduce|lower|halve|shrink|cut|cap))" + _OBJECT,
    ignore_case=True,
)


def _ways(text: str, pattern: LinearPattern) -> list[tuple[str, str]]:
    found = []
    for match in pattern.finditer(text[:_MAX_TEXT]):
        key = option_key(match.group("name"))
        if option_like(key):
            found.append((key, "up" if match.group("up") else "down"))
        if len(found) >= _MAX_FOUND:
            break
    return found


def advised_ways(texts: Sequence[str]) -> dict[str, str]:
    """Option key -> ``up``/``down``: the way the message or log lines advise moving it (an
    option advised both ways is left out)."""
    ways: dict[str, str] = {}
    mixed: set[str] = set()
    for text in list(texts)[:_MAX_TEXTS]:
        for key, way in _ways(text or "", _ADVISED):
            if ways.setdefault(key, way) != way:
                mixed.add(key)
    return {key: way for key, way in ways.items() if key not in mixed}


def moves_against_advice(action: str, advised: Mapping[str, str]) -> list[str]:
    """Why ``action`` moves an option the opposite way to the message's advice (empty: no)."""
    if not advised:
        return []
    reasons = []
    for part in said_parts((action or "")[:_MAX_TEXT]):
        for key, way in _ways(part, _MOVED):
            want = advised.get(key)
            if want is not None and want != way:
                told = "increasing" if want == "up" else "decreasing"
                reason = f"the message advises {told} {key}; the action moves it the other way"
                if reason not in reasons:
                    reasons.append(reason)
    return reasons
