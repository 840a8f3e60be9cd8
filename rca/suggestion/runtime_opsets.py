"""Whether the ONNX Runtime an incident shows implements the opset of the node it refuses.

ONNX Runtime says "Could not find an implementation for the node OneHot(11)" both when the
op's version is newer than the release knows and when the release knows it but registers no
kernel for the node's input types (OneHot takes int64 indices, not int32). Its version
matrix (`rca/knowledge/compatibility/onnxruntime-opset.toml`) tells them apart when the
incident also shows the installed release: a standard ``ai.onnx`` node of opset 7 up to the
one the release implements (or an ``ai.onnx.ml`` node up to its ML opset) is the second
case, ``node-opset-implemented``, and upgrading the runtime or converting the model's opset
is not its fix. A release outside the table's rows, a custom operator or no version shown
gives nothing: an unknown contradicts no step.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.compatibility import Table, load_tables
from rca.suggestion.onnx_operators import ML_OPERATORS, STANDARD_OPERATORS
from rca.suggestion.text_lines import first_lines
from rca.suggestion.version_numbers import parse_version

__all__ = ["node_opset_implemented"]

#: The lowest opset any release implements (the matrix's note).
OLDEST_OPSET = 7
_NODE = linear(
    r"Could not find an implementation for (?:the node (?:\S*:)?|node )?(?:ai\.onnx(?:\.ml)?:)?"
    r"(?P<op>[A-Za-z_][\w.]*)\((?P<version>\d{1,3})\)"
)
#: "onnxruntime==1.5.2", "My onnxruntime version is 1.5.2", "ONNX Runtime version: 1.2.0",
#: "onnxruntime-gpu 1.10.0".
_RUNTIME = linear(
    r"\b(?:onnxruntime(?:[-_]gpu)?|onnx runtime)\b(?:[ \t]+version)?[ \t]*(?:is|:|==|=)?"
    r"[ \t]*v?(?P<version>\d{1,3}\.\d{1,3}(?:\.\d{1,4})?)\b",
    ignore_case=True,
)


def _matrix() -> Table | None:
    tables = load_tables()
    return next((t for t in tables if t.subject == "onnxruntime" and "opset" in t.columns), None)


def _runtime_release(lines: Sequence[str]) -> tuple[int, ...]:
    for line in lines:
        if match := _RUNTIME.search(line):
            return parse_version(match.group("version"))
    return ()


def node_opset_implemented(texts: Sequence[str]) -> bool:
    """Whether a node the runtime found no implementation for is of an opset the installed
    release (shown in the texts) implements: its input types lack a kernel, not its version."""
    lines = first_lines(texts)
    nodes = [m for line in lines for m in _NODE.finditer(line)]
    table = _matrix()
    release = _runtime_release(lines) if nodes else ()
    row = table.row_for(release) if table is not None and release else None
    if row is None:
        return False
    for node in nodes:
        op, version = node.group("op"), int(node.group("version"))
        if op not in STANDARD_OPERATORS:
            continue  # a custom operator: custom-operator-unregistered
        ml = op in ML_OPERATORS
        newest = parse_version(row.values.get("ml_opset" if ml else "opset", ""))
        if newest and (1 if ml else OLDEST_OPSET) <= version <= newest[0]:
            return True
    return False
