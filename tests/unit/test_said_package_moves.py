"""The package moves an action makes are read from the parts it says, every one of them
(issue 16, re-review finding 2): "don't pin numpy<2; upgrade numpy to 2.1 instead" moves numpy
to 2.1, so on a NumPy 1.x module imported under NumPy 2 it moves towards the cause; a
turned-down pin no longer hides it.
"""

from __future__ import annotations

import pytest

from rca.suggestion.package_moves import Move, moves
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context

_ABI = ("version-numpy2-abi", 0.9)
#: NumPy's message for a module built against NumPy 1.x imported under NumPy 2 (rl008's kind).
_ONE_ON_TWO = (
    "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.2 as it may crash."
    " To support both 1.x and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0."
    "\nIf you are a user of the module, the easiest solution will be to\ndowngrade to 'numpy<2'"
    " or try to upgrade the affected module."
)


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("Don't pin numpy<2; upgrade numpy to 2.1 instead.", [Move("numpy", "exact", (2, 1))]),
        (
            "Pin numpy<2, then upgrade numpy to 2.1.",
            [Move("numpy", "ceiling", (2,)), Move("numpy", "exact", (2, 1))],
        ),
        ("pip install -U --no-cache-dir vllm", [Move("vllm", "up")]),
    ],
)
def test_moves_are_read_from_what_is_said_and_kept_per_package(
    action: str, expected: list[Move]
) -> None:
    assert moves(action) == expected


@pytest.mark.parametrize(
    "action",
    [
        "Don't pin numpy<2; upgrade numpy to 2.1 instead.",
        "Keep torch, don't pin numpy<2 and upgrade numpy to 2.1 instead.",
        "Pin numpy<2 for now, then upgrade numpy to 2.1.",
    ],
)
def test_an_upgrade_to_numpy_2_beside_a_pin_is_a_harm(action: str) -> None:
    ctx = message_context(_ONE_ON_TWO, _ABI)
    assert not validate(draft(action, _ABI[0]), ctx).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Pin numpy<2 in the requirements; do not upgrade numpy to 2.1.",
        "Don't upgrade numpy to 2.1; pin numpy<2 instead.",
        "Don't upgrade torch and pin numpy<2 instead.",
    ],
)
def test_a_pin_that_turns_the_upgrade_down_passes(action: str) -> None:
    ctx = message_context(_ONE_ON_TWO, _ABI)
    assert validate(draft(action, _ABI[0]), ctx).premises_ok, action
