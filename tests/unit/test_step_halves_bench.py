"""``bench/step_halves.py`` splits the dev cases into a design half and a check half by a hash
of the case id (stable, whatever file a case is in) and says why each miss missed."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from step_halves import MISS_KINDS, half, miss_kind  # noqa: E402


def _row(**fields: Any) -> dict[str, Any]:
    row = {"in_action": False, "abstained": False, "guess": False, "runbook": "a", "step_hits": {}}
    row.update(fields)
    return row


def test_the_half_is_the_first_hex_digit_of_the_ids_sha1() -> None:
    for case_id in ("c001", "ra030", "rap018", "x"):
        digit = hashlib.sha1(case_id.encode(), usedforsecurity=False).hexdigest()[0]
        assert half(case_id) == ("A" if digit in "01234567" else "B")
    assert {half(f"case-{n}") for n in range(40)} == {"A", "B"}


def test_a_miss_is_classified_by_where_the_fix_term_is() -> None:
    assert miss_kind(_row(in_action=True)) is None
    assert miss_kind(_row(abstained=True, guess=True)) == MISS_KINDS[0]
    assert miss_kind(_row(step_hits={"a": [2], "b": []})) == MISS_KINDS[1]
    assert miss_kind(_row(step_hits={"a": [], "b": [0]})) == MISS_KINDS[2]
    assert miss_kind(_row(abstained=True, step_hits={"a": [], "b": []})) == MISS_KINDS[3]
