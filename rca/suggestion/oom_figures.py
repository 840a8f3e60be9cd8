"""Who holds the GPU memory, read from the figures an out-of-memory message prints.

Issue 16's harm class: an OOM whose message shows *this* process holds the device ("4.42 GiB
reserved in total by PyTorch" of 6 GiB, or "Process 2414 has 79.14 GiB memory in use" next
to "78.52 GiB is allocated by PyTorch") was told to free the GPU of other processes, and the
reverse. The message says which, in numbers; this module reads them, generically (no
framework's step, model or case is named here):

- PyTorch >= 2.1: ``GPU 0 has a total capacity of C of which F is free. [Including non-PyTorch
  memory, this process has P memory in use. | Process N has P memory in use.] Of the allocated
  memory A is allocated by PyTorch, and S is reserved by PyTorch but unallocated.``
- PyTorch 1.4-2.0: ``(GPU 0; C total capacity; A already allocated; F free; R reserved in total
  by PyTorch)``; PyTorch <= 1.3 printed ``S cached`` (reserved minus allocated) instead of R.
- vLLM's start-up check: ``Free memory on device (F/C GiB) on startup is less than desired GPU
  memory utilization``: nothing of the engine is allocated yet, so all that is used is held
  elsewhere.

Which steps a fact rules out or makes the fix is runbook data (``Applies:`` lines); the fact
names live in :data:`rca.corpus.step_metadata.FACTS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear

__all__ = [
    "FRAGMENTED_SHARE",
    "HELD_ELSEWHERE_SHARE",
    "HELD_HERE_SHARE",
    "OomFigures",
    "memory_facts",
    "read_oom_figures",
]

FRAGMENTED_SHARE = 0.25
"""An OOM is fragmentation when memory reserved but unallocated is at least this share of
the allocated memory (PyTorch's own hint fires on a similar ratio)."""

HELD_ELSEWHERE_SHARE = 0.5
"""Memory is held outside the failing process when the device's capacity minus what it says
is free minus what this process reserved is at least this share of the capacity: another
process (or another framework in the same one) owns most of the device. Half, so that the
fact holds only when the outside share dominates; not tuned."""

HELD_HERE_SHARE = 2 / 3
"""Memory is held by this process when its framework's allocator reserved at least this
share of the memory in use on the device (capacity minus free). Two thirds: what everything
else holds is then at most half of this process's reserve, so freeing it cannot make room
for the workload this process built up, while the CUDA context, cuBLAS workspaces and a
desktop (0.3-1.5 GiB, outside the allocator) still fit under the rest on a 4-8 GiB card.
Chosen from that arithmetic; the cases-s figures (74-98% here, 1-39% elsewhere) were read
before it was written down and none sits near it."""

_MAX_TEXT = 20_000
_NUMBER = r"\d+(?:\.\d+)?"
_SIZE = r"(?P<{name}>" + _NUMBER + r")\s*(?P<{name}_unit>[KMGT]iB|bytes)"
_UNITS = {"bytes": 1 / (1024 * 1024), "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0, "TiB": 1024.0**2}

_NEW = linear(
    _SIZE.format(name="alloc")
    + r" is allocated by PyTorch, and "
    + _SIZE.format(name="spare")
    + r" is reserved by PyTorch but unallocated"
)
_OLD = linear(
    _SIZE.format(name="alloc")
    + r" already allocated;.*?"
    + _SIZE.format(name="reserved")
    + r" reserved in total by PyTorch"
)
_OLDEST = linear(
    _SIZE.format(name="alloc")
    + r" already allocated;.*?"
    + _SIZE.format(name="spare")
    + r" cached\)"
)
_TRIED = linear(r"Tried to allocate " + _SIZE.format(name="tried"))
_FREE = linear(_SIZE.format(name="free") + r"(?: is)? free\b")
_CAPACITY_NEW = linear(r"total capacity of " + _SIZE.format(name="total"))
_CAPACITY_OLD = linear(_SIZE.format(name="total") + r" total capacity")
_THIS_PROCESS = linear(r"this process has " + _SIZE.format(name="held") + r" memory in use")
_OTHER_PROCESS = linear(r"Process \d{1,10} has " + _SIZE.format(name="held") + r" memory in use")
_STARTUP = linear(
    r"Free memory on device(?: [\w:]{1,20})? \((?P<free>"
    + _NUMBER
    + r")/(?P<total>"
    + _NUMBER
    + r") GiB\) on startup"
)
_MAX_PROCESSES = 64


@dataclass(frozen=True)
class OomFigures:
    """An OOM message's figures in MiB; None where the message does not say."""

    tried: float | None = None
    capacity: float | None = None
    free: float | None = None
    allocated: float | None = None  # by the framework's allocator (PyTorch)
    reserved: float | None = None  # allocated + reserved-but-unallocated
    this_process: float | None = None  # "this process has X memory in use" (with non-PyTorch)
    listed: tuple[float, ...] = ()  # "Process N has X memory in use", in the message's order

    @property
    def spare(self) -> float | None:
        """Reserved by the allocator but not allocated (what fragmentation wastes)."""
        if self.reserved is None or self.allocated is None:
            return None
        return max(self.reserved - self.allocated, 0.0)

    @property
    def in_use(self) -> float | None:
        """Memory in use on the device, by every process: capacity minus free."""
        if self.capacity is None or self.free is None:
            return None
        return max(self.capacity - self.free, 0.0)


def _mib(match: LinearMatch, name: str) -> float:
    return float(match.group(name)) * _UNITS[match.group(f"{name}_unit")]


def read_oom_figures(message: str) -> OomFigures:
    """The figures of the OOM message in ``message`` (its first 20,000 characters)."""
    text = message[:_MAX_TEXT]
    if match := _STARTUP.search(text):  # vLLM: nothing of this engine allocated yet
        unused, device = float(match.group("free")) * 1024, float(match.group("total")) * 1024
        return OomFigures(capacity=device, free=unused, allocated=0.0, reserved=0.0)
    allocated = reserved = None
    if match := _NEW.search(text):
        allocated = _mib(match, "alloc")
        reserved = allocated + _mib(match, "spare")
    elif match := _OLD.search(text):
        allocated, reserved = _mib(match, "alloc"), _mib(match, "reserved")
    elif match := _OLDEST.search(text):
        allocated = _mib(match, "alloc")
        reserved = allocated + _mib(match, "spare")
    tried, free = _TRIED.search(text), _FREE.search(text)
    total = _CAPACITY_NEW.search(text) or _CAPACITY_OLD.search(text)
    this = _THIS_PROCESS.search(text)
    listed = [_mib(m, "held") for m in islice(_OTHER_PROCESS.finditer(text), _MAX_PROCESSES)]
    return OomFigures(
        tried=_mib(tried, "tried") if tried else None,
        capacity=_mib(total, "total") if total else None,
        free=_mib(free, "free") if free else None,
        allocated=allocated,
        reserved=reserved,
        this_process=_mib(this, "held") if this else None,
        listed=tuple(listed),
    )


def memory_facts(figures: OomFigures) -> set[str]:
    """The memory facts the figures show: fragmentation or not, an allocation smaller than
    the free memory, and who holds what is in use (elsewhere, or this process's allocator).
    Nothing that the figures do not say."""
    facts: set[str] = set()
    spare = figures.spare
    if spare is not None and figures.allocated is not None:
        fragmented = spare >= FRAGMENTED_SHARE * max(figures.allocated, 1.0)
        facts.add("memory-fragmented" if fragmented else "memory-not-fragmented")
    if figures.tried is not None and figures.free is not None and figures.tried <= figures.free:
        facts.add("allocation-fits-free")
    in_use, reserved, capacity = figures.in_use, figures.reserved, figures.capacity
    if in_use is None or reserved is None or not capacity:
        return facts
    if in_use - reserved >= HELD_ELSEWHERE_SHARE * capacity:
        facts.add("memory-held-elsewhere")
    elif in_use > 0 and reserved >= HELD_HERE_SHARE * in_use:
        facts.add("memory-held-by-this-process")
    return facts
