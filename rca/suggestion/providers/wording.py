"""How the offline composer words a suggestion: a runbook step split, trimmed and made specific.

Text only: it decides nothing about which step fits, so it can be changed (and tested)
without touching the ranking in :mod:`rca.suggestion.providers.step_ranking`.
"""

from __future__ import annotations

from ingest.linear_regex import compile as linear
from rca.corpus.sentences import first_sentence_end
from rca.suggestion.context import AnalysisContext, Evidence, innermost_app_frame
from rca.suggestion.validation import MAX_ACTION_CHARS, MAX_REASON_CHARS

_BOLD_ACTION = linear(r"^\*\*(?P<action>.+?)\*\*\s*(?:Reason:\s*(?P<reason>.*))?$", dotall=True)
_LEADING_FILLER = linear(
    r"^(?:alternatively|or|also|optionally|then|instead)\b[,:]?\s*", ignore_case=True
)


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
    """The first sentence of ``text``, cut at a word boundary (with "…") beyond ``limit``."""
    text = text.strip()
    sentence = text[: first_sentence_end(text)]
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:(")
    return cut + "…"


def _closing(text: str, start: int) -> int:
    """Index of the ")" matching the "(" at `start`, or -1 when it is never closed."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def aside_spans(text: str) -> list[tuple[int, int]]:
    """Where the parenthetical asides are, each with the spaces before it.

    An aside opens after a space and ends at its matching parenthesis, code inside and
    all: ``(`x.permute(0, 3, 1, 2)` for batches)``. A call such as `x.size(0)` or
    `backward()` has no space before its parenthesis; it is code, not an aside.
    """
    spans: list[tuple[int, int]] = []
    i = 0
    while (i := text.find("(", i)) != -1:
        end = _closing(text, i)
        if end == -1:
            break
        if i > 0 and text[i - 1].isspace():
            start = len(text[:i].rstrip())
            spans.append((start, end + 1))
        i = end + 1
    return spans


def drop_asides(text: str) -> str:
    for start, end in reversed(aside_spans(text)):
        text = text[:start] + text[end:]
    return text


def shorten(action: str) -> str:
    """Drop parenthetical asides (examples, commands) from the end of an over-long action
    until it fits the validator's limit; the step's wording stays otherwise intact."""
    while len(action) > MAX_ACTION_CHARS and (asides := aside_spans(action)):
        start, end = asides[-1]
        action = action[:start] + action[end:]
    return action


def _shape(dims: list[int | None]) -> str:
    return "[" + ", ".join("None" if d is None else str(d) for d in dims) + "]"


_DEVICES = linear(r"\b(?:cuda:\d+|cpu|meta|mps)\b(?:\s+and\s+\b(?:cuda:\d+|cpu|meta|mps)\b)")
_TENSOR_TYPES = linear(
    r"\b(?:torch\.)?(?:cuda\.)?(?:CUDA)?(?:Half|Float|Double|BFloat16|Long|Int|Byte|Bool)Tensor\b"
)
_SCALAR_TYPES = linear(
    r"\bexpected (?:scalar type|both vectors to have same dtype|mat1 and mat2 to have the same"
    r" dtype)[^A-Za-z]*(?P<a>\w+)[^A-Za-z]+(?:but )?(?:found|got)?:?\s*(?P<b>[\w:]+)",
    ignore_case=True,
)
#: TensorFlow's wording of the same mismatch: "cannot compute Conv2D as input #1(zero-based)
#: was expected to be a half tensor but is a float tensor".
_TF_TYPES = linear(
    r"\bwas expected to be an? (?P<a>\w+) tensor but is an? (?P<b>\w+) tensor", ignore_case=True
)


def _dtype_or_device(message: str) -> str:
    """The dtypes or devices a mismatch message names, as a sentence, else ``""``."""
    devices = _DEVICES.search(message)
    if devices and "device" in message:
        return f"Here the tensors are on {devices.group(0)}."
    types = list(dict.fromkeys(_TENSOR_TYPES.findall(message)))
    if len(types) >= 2:
        return f"Here the types are {types[0]} and {types[1]}."
    scalar = _SCALAR_TYPES.search(message) or _TF_TYPES.search(message)
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


def compose(source: Evidence, action: str, reason: str, ctx: AnalysisContext) -> tuple[str, str]:
    """Action (one sentence) and reason (the step's first sentence plus the specifics)."""
    action = first_sentence(shorten(action), MAX_ACTION_CHARS).rstrip(".") + "."
    specifics = incident_specifics(ctx)
    room = MAX_REASON_CHARS - len(specifics) - 1
    base = first_sentence(reason or f"This incident matches the runbook '{source.title}'.", room)
    base = base[:1].upper() + base[1:]
    return action, f"{base} {specifics}".strip()
