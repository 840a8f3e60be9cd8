"""The logged loss grew step after step before training stopped: it diverged.

A NaN or inf loss has two common causes with opposite fixes. Bad data (a NaN feature, a
zero-variance column, an empty target) makes the loss non-finite at once, on the batch
that carries it. Too large updates (the learning rate, unscaled inputs, no clipping) make
it grow geometrically over several steps, every value finite until it overflows. A
training log that shows the loss rising step after step by orders of magnitude says the
second: the inputs were finite for every step it logged, so "drop the NaN values from the
data" cannot be the fix.

:data:`DIVERGING` (``loss-diverging``) when at least three log lines name a loss, the
values rise at every line, all finite and positive, and the last is at least
:data:`_GROWTH` times the first. Linear time: RE2 over capped lines.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["DIVERGING", "loss_trend_facts"]

DIVERGING = "loss-diverging"

#: The last logged loss over the first: two orders of magnitude is no noisy plateau.
_GROWTH = 100.0
#: "loss 1410", "loss=2.5e+07", "'loss': 3.1", "Loss: 12" (not val_loss, train_loss).
_LOSS = linear(
    r"\bloss['\"]?\s*[=:]?\s*(?P<value>[-+]?(?:\d{1,20}(?:\.\d{0,20})?|\.\d{1,20})(?:[eE][-+]?\d{1,4})?)\b",
    ignore_case=True,
)


def loss_trend_facts(logs: Sequence[str]) -> set[str]:
    """:data:`DIVERGING` when the ``logs`` lines' losses rise at every line by
    :data:`_GROWTH` in all (at least three of them)."""
    values: list[float] = []
    for line in first_lines(logs):
        match = _LOSS.search(line)
        if match:
            values.append(float(match.group("value")))
    if len(values) < 3 or not all(math.isfinite(v) and v > 0 for v in values):
        return set()
    rising = all(later > earlier for earlier, later in itertools.pairwise(values))
    return {DIVERGING} if rising and values[-1] >= _GROWTH * values[0] else set()
