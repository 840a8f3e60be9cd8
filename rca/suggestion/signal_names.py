"""Which signal killed the process: a shared-memory (bus error) fix needs SIGBUS.

A process writing past a full ``/dev/shm`` dies of SIGBUS ("Bus error", "signal 7", "killed
by signal: Bus error"); raising the container's shared memory (``--shm-size``,
``--ipc=host``) is the fix for that. A message that names another signal (an illegal
instruction, a segmentation fault, the OOM killer's SIGKILL, an abort) reports another
failure, and a shared-memory step justified by a bus error does not apply.

:data:`OTHER_SIGNAL` (``signal-other-than-bus``) holds when the message or log lines name a
fatal signal and none of those named is SIGBUS. Read: names (``SIGILL``, ``SIGSEGV``,
``SIGKILL``, ``SIGABRT``, ``SIGFPE``), strsignal wordings after "signal:" or before "(core
dumped)" (``killed by signal: Illegal instruction``, ``Segmentation fault (core dumped)``),
and numbers after "signal" (``signal 4``, ``signal=11``, ``Signal 9 (SIGKILL) received``) or
as a negative exit code (``exitcode : -4``) on Linux numbering (7 is SIGBUS). A GPU kernel's
"illegal instruction was encountered" is a CUDA error, not a signal. Steps whose premise is
a bus error carry the fact in ``unless``; :mod:`rca.suggestion.checks.bus_error` fails a
suggestion that raises shared memory for a bus error. Linear time: RE2 over capped lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["BUS_SIGNAL", "OTHER_SIGNAL", "named_signals", "signal_facts"]

BUS_SIGNAL = "SIGBUS"
OTHER_SIGNAL = "signal-other-than-bus"

#: Linux signal numbers of the fatal signals a message names.
_NUMBERS = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV"}
_WORDS = {
    "bus error": "SIGBUS",
    "illegal instruction": "SIGILL",
    "segmentation fault": "SIGSEGV",
    "killed": "SIGKILL",
    "aborted": "SIGABRT",
    "floating point exception": "SIGFPE",
}
_NAME = linear(r"\bSIG(ILL|SEGV|KILL|ABRT|FPE|BUS)\b")
_WORDING = linear(
    r"\bsignal:?\s+(bus error|illegal instruction|segmentation fault|killed|aborted"
    r"|floating point exception)\b"
    r"|\b(bus error|illegal instruction|segmentation fault|aborted|floating point exception)"
    r"\s*\(core dumped\)"
    r"|^\s*(bus error|illegal instruction|segmentation fault|floating point exception)\s*$"
    r"|\bunexpected (bus error)\b",
    ignore_case=True,
)
_NUMBER = linear(
    r"\bsignal(?:ed)?(?:\s+to\s+shutdown\s+with\s+signal)?\s*[:=]?\s*(\d{1,2})\b"
    r"|\bexit\s?code\s*:?\s*-(\d{1,2})\b",
    ignore_case=True,
)
_GPU_ILLEGAL = linear(
    r"illegal instruction was encountered|CUDA_ERROR_ILLEGAL_INSTRUCTION|cudaErrorIllegal",
    ignore_case=True,
)


def named_signals(texts: Sequence[str]) -> set[str]:
    """The fatal signals (``SIGILL``, ``SIGBUS``, ...) the lines name."""
    found: set[str] = set()
    for line in first_lines(texts):
        if _GPU_ILLEGAL.search(line):
            continue
        found.update(f"SIG{m[1]}" for m in _NAME.finditer(line))
        for m in _WORDING.finditer(line):
            words = next(group for group in (m[1], m[2], m[3], m[4]) if group)
            found.add(_WORDS[words.lower()])
        for m in _NUMBER.finditer(line):
            number = int(m[1] or m[2])
            if number in _NUMBERS:
                found.add(_NUMBERS[number])
    return found


def signal_facts(texts: Sequence[str]) -> set[str]:
    """:data:`OTHER_SIGNAL` when the lines name a fatal signal and none is SIGBUS."""
    named = named_signals(texts)
    return {OTHER_SIGNAL} if named and BUS_SIGNAL not in named else set()
