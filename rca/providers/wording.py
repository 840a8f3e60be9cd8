"""How the offline composer words a suggestion: a runbook step split, trimmed and made specific.

Text only: it decides nothing about which step fits, so it can be changed (and tested)
without touching the ranking in :mod:`rca.providers.step_ranking`.
"""

from __future__ import annotations

import re

from rca.context import AnalysisContext, innermost_app_frame
from rca.validation import MAX_ACTION_CHARS

_BOLD_ACTION = re.compile(r"^\*\*(?P<action>.+?)\*\*\s*(?:Reason:\s*(?P<reason>.*))?$", re.DOTALL)
_SENTENCE = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<=[.!?])\s+(?=[A-Z`(])")
_LEADING_FILLER = re.compile(r"^(?:alternatively|or|also|optionally|then|instead)\b[,:]?\s*", re.I)
ASIDE = re.compile(r"\s*\([^()]*\)")
_LAST_ASIDE = re.compile(r"\s*\([^()]*\)(?=[^()]*$)")


def split_step(step: str) -> tuple[str, str]:
    """Split ``**Action.** Reason: why.`` into action and reason (one line each)."""
    text = " ".join(step.split())
    match = _BOLD_ACTION.match(text)
    if match:
        action, reason = match.group("action"), match.group("reason") or ""
    else:
        action, _, reason = text.partition(" Reason: ")
    action = _LEADING_FILLER.sub("", action.strip()).strip()
    action = action[:1].upper() + action[1:]
    return action, reason.strip()


def first_sentence(text: str, limit: int) -> str:
    sentence = _SENTENCE.split(text.strip(), maxsplit=1)[0]
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:(")
    return cut + "…"


def shorten(action: str) -> str:
    """Drop parenthetical asides (examples, commands) from the end of an over-long action
    until it fits the validator's limit; the step's wording stays otherwise intact."""
    while len(action) > MAX_ACTION_CHARS:
        cut = _LAST_ASIDE.sub("", action, count=1)
        if cut == action:
            break
        action = cut
    return action


def _shape(dims: list[int | None]) -> str:
    return "[" + ", ".join("None" if d is None else str(d) for d in dims) + "]"


_DEVICES = re.compile(r"\b(?:cuda:\d+|cpu|meta|mps)\b(?:\s+and\s+\b(?:cuda:\d+|cpu|meta|mps)\b)")
_TENSOR_TYPES = re.compile(
    r"\b(?:torch\.)?(?:cuda\.)?(?:CUDA)?(?:Half|Float|Double|BFloat16|Long|Int|Byte|Bool)Tensor\b"
)
_SCALAR_TYPES = re.compile(
    r"\bexpected (?:scalar type|both vectors to have same dtype|mat1 and mat2 to have the same"
    r" dtype)[^A-Za-z]*(?P<a>\w+)[^A-Za-z]+(?:but )?(?:found|got)?:?\s*(?P<b>[\w:]+)",
    re.IGNORECASE,
)


def _dtype_or_device(message: str) -> str:
    """The dtypes or devices a mismatch message names, as a sentence, else ``""``."""
    devices = _DEVICES.search(message)
    if devices and "device" in message:
        return f"Here the tensors are on {devices.group(0)}."
    types = list(dict.fromkeys(_TENSOR_TYPES.findall(message)))
    if len(types) >= 2:
        return f"Here the types are {types[0]} and {types[1]}."
    scalar = _SCALAR_TYPES.search(message)
    if scalar:
        return f"Here {scalar.group('a')} was expected but {scalar.group('b')} was found."
    return ""


def incident_specifics(ctx: AnalysisContext) -> str:
    """What is particular to this incident: the mismatched shapes, dtypes or devices, and
    where it raised."""
    parts: list[str] = []
    for diff in ctx.shape_diff[:1]:
        expected, actual = diff.get("expected") or [], diff.get("actual") or []
        what = f"`{diff['tensor']}` ({diff.get('op')})" if diff.get("tensor") else diff.get("op")
        if len(expected) != len(actual):
            parts.append(
                f"Here the {what} shape has rank {len(actual)} ({_shape(actual)}) where rank"
                f" {len(expected)} ({_shape(expected)}) is expected."
            )
            continue
        pairs = [(e, a) for e, a in zip(expected, actual, strict=True) if e is not None and e != a]
        if pairs:
            got = " and ".join(f"{a} instead of {e}" for e, a in pairs[:2])
            parts.append(f"Here the {what} got {got} (expected {_shape(expected)}).")
    if not ctx.shape_diff and (mismatch := _dtype_or_device(ctx.message or "")):
        parts.append(mismatch)
    frame = innermost_app_frame(ctx.frames)
    if frame and frame.get("in_app") and frame.get("filename") and frame.get("function"):
        parts.append(f"It was raised in {frame['filename']}:{frame['function']}.")
    return " ".join(parts)
