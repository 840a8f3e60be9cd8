"""Whether reading adversarial text grows linearly with its length, on any machine.

Readers of incident text must run in linear time (an attacker writes the text). A test
that asserts "this input reads within 2 s" measures the machine as much as the code: on a
loaded CI host a linear reader can take longer, and on a fast one a quadratic reader of a
modest input can finish in time. Here the same reader runs on a small and a large input
built the same way, and the large one may cost at most `SLACK` times its share of the
small one's time (linear: the size ratio; quadratic: its square, 40x more at the default
sizes). An absolute floor keeps timer noise on a tiny small input from failing it.

What it cannot see: a reader that cuts its input at a fixed length costs the same at both
sizes once both pass the cut, so a pattern that explodes *inside* the cut passes here
(a review found a capped `(a|a)*b` at 3.2 s for both). Pick sizes whose large input stays
under the reader's cut; for the cut itself, a test of its bound (what is read past it).
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: How far above linear growth a reading may be before it fails (noise, caches, GC).
SLACK = 6.0
#: Seconds below which the large reading always passes (a catastrophic pattern takes far
#: longer at these sizes; a linear one far less).
FLOOR = 0.5


def _best(read: Callable[[int], object], size: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        read(size)
        best = min(best, time.perf_counter() - started)
    return best


def assert_linear(read: Callable[[int], object], small: int = 500, large: int = 20_000) -> None:
    """Fail when `read(large)` costs far more than `large / small` times `read(small)`.

    `read(n)` builds an input of n repeats of its adversarial piece and reads it."""
    read(small)  # warm: compiled patterns, imports
    short, long = _best(read, small, 5), _best(read, large, 2)
    allowed = max(FLOOR, SLACK * (large / small) * short)
    assert long < allowed, f"{large} repeats took {long:.3f} s, {small} took {short:.5f} s"
