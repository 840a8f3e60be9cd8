"""Diagnostics a step would have the user turn on, already in the incident.

"Rerun with ``NCCL_DEBUG=INFO`` and fix what its ``NCCL WARN`` line names" and "print the
ONNX parser's errors (``parser.get_error(i)``)" suppose the incident lacks that output. When
its message or log lines already hold it, the step repeats what was done, and the fix is
whatever that output names:

- ``nccl-debug-shown``: NCCL's own debug lines (``host:pid:tid [0] NCCL INFO ...``,
  ``NCCL WARN ...``), which NCCL prints only when ``NCCL_DEBUG`` is ``INFO`` or ``WARN``;
  the "run with NCCL_DEBUG=WARN for details" hint of an exception is not such a line.
  Also NCCL's last warning as PyTorch appends it to an NCCL error: ``Last error:`` and,
  on that line or the next, the text of ``ncclGetLastError`` ("Error while creating shared
  memory segment /dev/shm/nccl-...", "Duplicate GPU detected ..."), which is the message
  of the ``NCCL WARN`` line the rerun would print. Only in a text that is an NCCL error
  (``ncclSystemError``, ``NCCL error``): a gRPC client's "last error: INTERNAL ..." is not.
- ``parser-errors-shown``: the errors of TensorRT's ONNX parser, which name their source
  file (``ModelImporter.cpp:92 In function parseGraph``, ``builtin_op_importers.cpp``,
  ``onnx2trt_utils.cpp``) or the node ("While parsing node number 3", TensorRT 10's "In node
  3 with name: ..."); "Failed to parse onnx file" alone says nothing of why.
- ``parser-error-not-batch``: the parser's errors are shown and none says the network lacks
  an explicit batch dimension. The parser checks that first, before importing any node
  ("This version of the ONNX parser only supports TensorRT INetworkDefinitions with an
  explicit batch dimension"), so an error that names a node, a weight or an operator without
  saying so is another cause: creating the network with the explicit-batch flag is no fix.

Linear-time patterns (:mod:`ingest.linear_regex`) over capped lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = [
    "NCCL_DEBUG_SHOWN",
    "PARSER_ERROR_NOT_BATCH",
    "PARSER_ERRORS_SHOWN",
    "parser_cause_facts",
    "shown_diagnostic_facts",
]

NCCL_DEBUG_SHOWN = "nccl-debug-shown"
PARSER_ERRORS_SHOWN = "parser-errors-shown"
PARSER_ERROR_NOT_BATCH = "parser-error-not-batch"
_NCCL_DEBUG = linear(r"\bNCCL (?:INFO|WARN)\b")
#: ``Last error:`` as PyTorch's ProcessGroupNCCL writes it (``[rank0]: Last error:``), and
#: what follows it on the line; case-sensitive, as it is printed.
_LAST_ERROR = linear(r"^[ \t]*(?:\[rank\d+\]:)?[ \t]*Last error:[ \t]*(?P<rest>.*)$")
_RANK_PREFIX = linear(r"^[ \t]*(?:\[rank\d+\]:)?[ \t]*")
#: A next line that is no part of the warning: c10's ``Exception raised from ...``, a
#: ``Traceback``, a log header (``[W1207 ...``, ``[E ProcessGroupNCCL.cpp``, glog's ``W1207``)
#: or a timestamp; and what PyTorch writes when ``ncclGetLastError`` is empty.
_NOT_WARNING = linear(
    r"^(?:Exception raised from\b|Traceback\b|\[[IWEF](?:\d|\s)|[IWEF]\d{4}\s"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}:\d{2})"
)
_UNKNOWN = "unknown nccl error"
#: The text is an NCCL error: PyTorch's "NCCL error in: ..." or a result code of NCCL's API
#: (``ncclResult_t`` in nccl.h) but ``ncclSuccess`` and ``ncclInProgress``.
_NCCL_ERROR = linear(
    r"\bNCCL error\b|\bnccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument"
    r"|InvalidUsage|RemoteError)\b"
)
_EXPLICIT_BATCH = linear(r"explicit[ _-]?batch|implicit[ _-]?batch", ignore_case=True)
_PARSER_ERROR = linear(
    r"\b(?:ModelImporter|builtin_op_importers|onnx2trt_utils|importerUtils)\.cpp\b"
    r"|\bWhile parsing node number -?\d+|\bIn node -?\d+ with name:"
)


def shown_diagnostic_facts(texts: Sequence[str]) -> set[str]:
    """The diagnostics (NCCL's debug lines, the ONNX parser's errors) the texts show."""
    lines = first_lines(texts)
    facts: set[str] = set()
    if any(_NCCL_DEBUG.search(line) for line in lines) or _nccl_last_error(lines):
        facts.add(NCCL_DEBUG_SHOWN)
    if any(_PARSER_ERROR.search(line) for line in lines):
        facts.add(PARSER_ERRORS_SHOWN)
    return facts


def _nccl_last_error(lines: list[str]) -> bool:
    """Whether the lines are an NCCL error and NCCL's last warning: a ``Last error:`` line
    with text after it, on the line or on the next one (the next log line when each line
    of the error was logged on its own). "Unknown NCCL Error" is PyTorch's text when NCCL
    recorded no warning, and a next line that starts a trace or a log entry is not one."""
    if not any(_NCCL_ERROR.search(line) for line in lines):
        return False
    for at, line in enumerate(lines):
        match = _LAST_ERROR.search(line)
        if match is None:
            continue
        rest = match.group("rest").strip()
        if not rest and at + 1 < len(lines):
            following = lines[at + 1]
            prefix = _RANK_PREFIX.search(following)
            rest = following[prefix.end() if prefix else 0 :].strip()
            if _NOT_WARNING.search(rest):
                rest = ""
        if rest and rest.rstrip(".").lower() != _UNKNOWN:
            return True
    return False


def parser_cause_facts(texts: Sequence[str]) -> set[str]:
    """:data:`PARSER_ERROR_NOT_BATCH` when the texts show the ONNX parser's errors and none
    of their lines speaks of the explicit (or implicit) batch dimension."""
    lines = first_lines(texts)
    if not any(_PARSER_ERROR.search(line) for line in lines):
        return set()
    if any(_EXPLICIT_BATCH.search(line) for line in lines):
        return set()
    return {PARSER_ERROR_NOT_BATCH}
