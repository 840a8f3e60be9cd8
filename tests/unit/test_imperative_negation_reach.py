"""How far an imperative negation reaches over "and" (issue 16, re-review finding 1).

After "rather than", "instead of", "without" or "avoid", a verb a bare "and" joins in the
governed verb's own form is part of the turned-down construction ("keep 535 rather than purge
535 and install 470"). After an imperative "don't / do not / never" it is the next step: "don't
upgrade the driver and downgrade it to 470 instead" says to downgrade, and a trailing "instead"
says so plainly.
"""

from __future__ import annotations

import pytest

from rca.suggestion.context import AnalysisContext
from rca.suggestion.negated_clauses import said_parts
from rca.suggestion.validation import validate
from tests.support.driver_texts import TOO_OLD as _TOO_OLD
from tests.support.driver_texts import installed_535
from tests.support.evidence import draft, message_context

_ABI = ("version-numpy2-abi", 0.9)
#: NumPy's message for a module built against NumPy 1.x imported under NumPy 2 (rl008's kind).
_ONE_ON_TWO = (
    "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.2 as it may crash."
    " To support both 1.x and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0."
    "\nIf you are a user of the module, the easiest solution will be to\ndowngrade to 'numpy<2'"
    " or try to upgrade the affected module."
)


def _installed_535() -> AnalysisContext:
    return installed_535("torch==2.4.0+cu124")


@pytest.mark.parametrize(
    ("action", "said"),
    [
        (
            "Keep torch, don't upgrade the driver and downgrade it to 470 instead.",
            ["Keep torch", "and downgrade it to 470 instead"],
        ),
        (
            "Do not purge the driver and reinstall it; use torch cu118",
            ["and reinstall it", "use torch cu118"],
        ),
        # after "rather than" the joined verb is turned down with it, unless "instead" follows
        (
            "Keep the 535 driver rather than purge 535 and install driver 470",
            ["Keep the 535 driver"],
        ),
        (
            "Keep the 535 driver rather than purge 535 and install driver 470 instead",
            ["Keep the 535 driver", "and install driver 470 instead"],
        ),
    ],
)
def test_and_after_an_imperative_negation_starts_the_next_step(
    action: str, said: list[str]
) -> None:
    assert said_parts(action) == said


@pytest.mark.parametrize(
    "action",
    [
        "Keep torch, don't upgrade the driver and downgrade it to 470 instead.",
        "Install torch built for cu121; don't upgrade the driver and reinstall it at 470 instead.",
        "Keep the current torch build, never upgrade the driver and pin the NVIDIA driver to 470"
        " instead.",
    ],
)
def test_a_downgrade_after_a_negated_step_is_a_harm(action: str) -> None:
    result = validate(draft(action, _TOO_OLD[0]), _installed_535())
    assert not result.premises_ok, action


def test_the_alternative_after_a_negated_step_is_read_as_the_answer() -> None:
    driver = "Don't downgrade the driver and install torch built for CUDA 12.1 instead."
    assert validate(draft(driver, _TOO_OLD[0]), _installed_535()).ok, driver
    numpy = "Don't upgrade torch and pin numpy<2 instead."
    assert validate(draft(numpy, _ABI[0]), message_context(_ONE_ON_TWO, _ABI)).ok, numpy
