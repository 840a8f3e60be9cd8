"""The out-of-range class label a message names: negative, or at or past the class count.

"Target 10 is out of bounds" (PyTorch's ``cross_entropy`` / ``nll_loss``) and "Received a
label value of 48 which is outside the valid range of [0, 40)" (TensorFlow's sparse softmax
cross-entropy) name the label that failed. The two kinds have different fixes, each wrong
for the other: a label at or past the class count means the output layer is too small or
the labels count from 1 (more outputs, or labels remapped to ``0..C-1``); a negative label
(-1, -100) is a padding or "no label" value the loss was not told to skip (``ignore_index``).
Telling a user with labels 1..10 to set ``ignore_index=-100`` fixes nothing.

:data:`NEGATIVE` (``label-negative``) or :data:`NOT_NEGATIVE` (``label-not-negative``) when
every label the lines name is of that kind; lines that name both claim nothing. Linear time:
RE2 (:mod:`ingest.linear_regex`) over capped lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["NEGATIVE", "NOT_NEGATIVE", "label_facts"]

NEGATIVE = "label-negative"
NOT_NEGATIVE = "label-not-negative"

_NAMED = linear(
    r"\bTarget (?P<value>-?\d{1,12}) is out of bounds"
    r"|\blabel value of (?P<tf>-?\d{1,12}) which is outside the valid range",
    ignore_case=True,
)


def label_facts(texts: Sequence[str]) -> set[str]:
    """:data:`NEGATIVE` / :data:`NOT_NEGATIVE` from the labels ``texts`` (message and log
    lines) name as out of range; nothing when they name none or both kinds."""
    kinds = set()
    for line in first_lines(texts):
        for match in _NAMED.finditer(line):
            value = match.group("value") or match.group("tf")
            kinds.add(NEGATIVE if value.startswith("-") else NOT_NEGATIVE)
    return kinds if len(kinds) == 1 else set()
