"""A shared-memory fix justified by a bus error when the message names another signal.

When :mod:`rca.suggestion.signal_names` reads ``signal-other-than-bus`` (the process died
of an illegal instruction, a segmentation fault, SIGKILL, and nothing names SIGBUS), a
suggestion to raise ``/dev/shm`` (``--shm-size``, ``--ipc=host``) whose own words say the
cause is a bus error (SIGBUS, signal 7) rests on a signal the incident does not show.
Runbook steps whose premise is a bus error carry the fact in ``unless``; this check catches
the same answer in any wording, from any runbook or an LLM.

Only an answer that names the bus error is failed: raising shared memory for another stated
reason (NCCL's segments) is left to the runbooks. Linear time: RE2
(:mod:`ingest.linear_regex`) over at most :data:`MAX_SCAN_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.signal_names import OTHER_SIGNAL

__all__ = ["bus_error_violations", "raises_shared_memory"]

_SHM = linear(
    r"/dev/shm|\bshm[-_]?size\b|--ipc[= ]host|\bipc:\s*host\b|\bshared[ -]memory\b"  # noqa: S108
    r"|\bshm\b",
    ignore_case=True,
)
_BUS = linear(r"\bbus error\b|\bSIGBUS\b|\bsignal\s*7\b", ignore_case=True)


def raises_shared_memory(action: str) -> bool:
    """Whether ``action`` names the container's shared memory (``/dev/shm``, ``--shm-size``)."""
    return bool(_SHM.search((action or "")[:MAX_SCAN_CHARS]))


def bus_error_violations(action: str, reason: str, facts: Iterable[str]) -> list[str]:
    """Why a shared-memory fix for a bus error does not fit this incident (empty: it may)."""
    if OTHER_SIGNAL not in set(facts) or not raises_shared_memory(action):
        return []
    said = f"{(action or '')[:MAX_SCAN_CHARS]}\n{(reason or '')[:MAX_SCAN_CHARS]}"
    if not _BUS.search(said):
        return []
    return [
        "do not raise shared memory for a bus error: the message names another signal"
        " (an illegal instruction, a segmentation fault, a kill), not SIGBUS; find what that"
        " signal means here"
    ]
