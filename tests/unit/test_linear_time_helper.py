"""The linearity check the premise readers' tests use tells a quadratic reader from a linear
one, whatever the machine's speed (tests/support/linear_time.py)."""

from __future__ import annotations

import re

import pytest

from tests.support.linear_time import assert_linear

# Python's `re` tries every start for `a+b` on a run of a's: quadratic in the run's length,
# the shape of a backtracking pattern an attacker's incident text would hit.
_QUADRATIC = re.compile(r"a+b")


def test_a_quadratic_reader_fails() -> None:
    # 60,000 a's: ~1.4 s quadratic here, well past the 0.5 s floor and the allowance a noisy
    # small reading grants; at 40,000 (0.6 s) one loaded `make test` run did not raise
    with pytest.raises(AssertionError, match="repeats took"):
        assert_linear(lambda n: _QUADRATIC.search("a" * (2 * n)), 500, 30_000)


def test_a_linear_reader_passes() -> None:
    assert_linear(lambda n: ("a" * (2 * n)).find("b"), 500, 20_000)
