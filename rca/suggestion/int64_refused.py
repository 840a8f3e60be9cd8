"""The message says 64-bit integer inputs are refused: casting to int64 goes the wrong way.

"Cast the ids to int64" is the fix when an operation needs Long indices. Some runtimes and
devices refuse them instead: TensorRT ("does not natively support INT64"), PyTorch on MPS
("MPS does not support cumsum op with int64 input"), JAX without x64 ("requested dtype int64
... is not available, and will be truncated to dtype int32"), ONNX Runtime fed int64 where
the graph declares int32 ("Actual: (tensor(int64)) , expected: (tensor(int32))"), web and
mobile runtimes ("int64 is not supported", "Unsupported data type: int64"), and ops
"not implemented for 'Long'". The fix goes the other way: int32 (or float for the op), or
the runtime's or exporter's option that accepts int64.

:data:`INT64_REFUSED` (``int64-refused``) holds when a message or log line says so and none
says int64 is what is expected ("expected scalar type Long", "expected: (tensor(int64))",
"must be Long"): two readings that disagree claim nothing. Steps that cast to int64 carry it
in ``unless``; :mod:`rca.suggestion.checks.int64_cast` fails a suggestion that does. Linear
time: RE2 (:mod:`ingest.linear_regex`) over capped lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["INT64_REFUSED", "int64_facts"]

INT64_REFUSED = "int64-refused"

_I64 = r"(?:int64|INT64|Int64|i64|I64|torch\.int64|tf\.int64|np\.int64|64-bit integers?)"

_REFUSED = linear(
    # "int64 is not supported", "INT64 inputs are not supported", "int64 (unsupported)"
    rf"\b{_I64}\b\W{{0,3}}(?:\w+\W{{1,3}}){{0,3}}?(?:is|are)\s+(?:not|un)\s*supported\b"
    rf"|\b{_I64}\b\W{{0,3}}(?:\w+\W{{1,3}}){{0,2}}?(?:not supported|unsupported)\b"
    # "does not natively support INT64", "no support for int64 reduction ops"
    r"|\b(?:does\s+not|doesn.t|do\s+not|don.t|cannot|can.t|no)\s+(?:natively\s+)?"
    rf"(?:support|handle|accept)(?:\s+for)?\s+(?:\w+\s+){{0,3}}?{_I64}\b"
    # "Unsupported data type: int64", "unsupported dtype int64"
    r"|\bunsupported\s+(?:\w+\s+){0,2}?(?:data\s?type|dtype|type|precision|element type)s?"
    rf"\W{{0,3}}(?:\w+\W{{1,3}}){{0,1}}?{_I64}\b"
    # JAX without x64: "Explicitly requested dtype int64 ... is not available"
    r"|\bdtype\s+(?:int64|<class 'numpy\.int64'>)\s+requested\b[^\n]{0,80}?\bnot available\b"
    # PyTorch: "not implemented for 'Long'"
    r"|\bnot implemented for '(?:Long|long|Int64)'"
    # PyTorch: "expected scalar type Int but found Long"
    r"|\bexpected scalar type (?:Int|Float|Half|BFloat16) but found Long\b"
    # ONNX Runtime: the fed type first, the graph's second
    r"|Actual:\s*\(\s*tensor\(int64\)\s*\)\s*,\s*expected:\s*\(\s*tensor\(int32\)\s*\)",
    ignore_case=True,
)
#: int64 is what the operation wants: the other direction.
_WANTED = linear(
    r"expected scalar type Long\b|\bmust be (?:a )?Long\b|expected:\s*\(\s*tensor\(int64\)\s*\)"
    r"|\bexpected [^\n]{0,40}?\b(?:int64|Long|LongTensor)\b[^\n]{0,20}?\bbut (?:got|found)"
    r"|\bshould be (?:of type )?(?:int64|Long|torch\.long)\b",
)


def int64_facts(texts: Sequence[str]) -> set[str]:
    """:data:`INT64_REFUSED` when a line says int64 is refused and none that it is wanted."""
    lines = first_lines(texts)
    refused = any(_REFUSED.search(line) for line in lines)
    if refused and not any(_WANTED.search(line) for line in lines):
        return {INT64_REFUSED}
    return set()
