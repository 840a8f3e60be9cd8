"""Numbers an answer may name besides the shape diff's: those the incident states and those
it computes from them.

The dimension rule (:func:`.dimensions.unknown_dim_share`) catches a made-up tensor size. An
answer also explains its step in numbers it did not make up: the prompt length the message
gives ("you requested 6616 tokens (568 in the messages, ...)": "the 568-token prompt fits"),
how far two shown sizes are apart ("the tokenizer added 8 tokens" on 32008 rows against
32000), and a sum it works out ("6048 - 568 = 5480"). Each is grounded in the incident as
much as a size the diff holds, so none is read as fabricated; a size shown nowhere ("reshape
to (4, 300)") still is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ingest.linear_regex import compile as linear
from ingest.parsing.shapes import ShapeDiff
from rca.suggestion.checks import MAX_SCAN_CHARS

__all__ = ["axis_differences", "computed_numbers", "incident_numbers"]

_NUMBER = linear(r"(?:^|[^\w.])(?P<n>\d{1,9})(?:[^\w.]|\.(?:\D|$)|$)")
#: One arithmetic step written out: ``6048 - 568 = 5480``, ``5000 + 568 = 5568``.
_ARITHMETIC = linear(r"(?P<a>\d{1,9})\s*(?P<op>[-+*/×−])\s*(?P<b>\d{1,9})\s*=\s*(?P<c>\d{1,9})\b")


def incident_numbers(message: str, logs: Iterable[Mapping[str, Any] | str] = ()) -> set[int]:
    """The whole numbers the incident's message and log lines state (not the digits of a
    version or a decimal: ``2.1``, ``0.95``). A log entry is a dict with a ``message`` or,
    as the SDKs and tests also send them, a bare line."""
    texts = [message or ""]
    for entry in logs or ():
        text = entry.get("message") if isinstance(entry, Mapping) else entry
        texts.append(str(text or ""))
    numbers: set[int] = set()
    for text in texts:
        text = text[:MAX_SCAN_CHARS]
        at, group = 0, _NUMBER.groupindex["n"]  # by index: re2's own match takes no names
        while (match := _NUMBER.search(text, at)) is not None:
            numbers.add(int(match.group(group)))
            at = match.end(group)
    return numbers


def axis_differences(diffs: Iterable[ShapeDiff]) -> set[int]:
    """How far the actual size is from the expected one at each axis both give a number:
    what an answer says is missing or extra (32008 rows for 32000: "8 added tokens")."""
    gaps: set[int] = set()
    for diff in diffs or ():
        expected, actual = diff.get("expected") or (), diff.get("actual") or ()
        for want, got in zip(expected, actual, strict=False):
            if isinstance(want, int) and isinstance(got, int) and want != got:
                gaps.add(abs(want - got))
    return gaps


def computed_numbers(text: str, known: set[int]) -> set[int]:
    """Results of the arithmetic ``text`` writes out over ``known`` numbers that hold
    (``6048 - 568 = 5480``): a number computed from grounded ones is grounded."""
    results: set[int] = set()
    a_, op_, b_, c_ = (_ARITHMETIC.groupindex[name] for name in ("a", "op", "b", "c"))
    for match in _ARITHMETIC.finditer(text[:MAX_SCAN_CHARS]):
        a, b, c = (int(match.group(index)) for index in (a_, b_, c_))
        if a not in known or b not in known:
            continue
        op = match.group(op_)
        value = {"+": a + b, "*": a * b, "×": a * b}.get(op)
        if op in "-−":
            value = a - b
        elif op == "/":
            value = a // b if b and a % b == 0 else None
        if value == c:
            results.add(c)
    return results
