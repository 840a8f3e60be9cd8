"""A negated omission refuses nothing in the driver check either (issue 16, re-review finding
8): "don't forget to downgrade the driver to 470" downgrades it, as
:func:`rca.suggestion.negated_clauses.negates_omission` reads it for every other rule; "don't
downgrade the driver to 470" still refuses it.
"""

from __future__ import annotations

import pytest

from rca.suggestion.context import AnalysisContext
from rca.suggestion.driver_targets import driver_targets
from rca.suggestion.validation import validate
from tests.support.driver_texts import TOO_OLD as _TOO_OLD
from tests.support.driver_texts import installed_535
from tests.support.evidence import draft


def _installed_535() -> AnalysisContext:
    return installed_535("torch==2.4.0+cu124")


@pytest.mark.parametrize(
    "action",
    [
        "Install the cu121 build of torch, and don't forget to downgrade the driver to 470.",
        "Reinstall torch for cu121 and do not hesitate to roll back the driver to 470.",
        "Install torch for cu121; make sure not to forget to downgrade the NVIDIA driver.",
    ],
)
def test_a_downgrade_under_a_negated_omission_is_a_harm(action: str) -> None:
    assert not validate(draft(action, _TOO_OLD[0]), _installed_535()).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Install the cu121 build of torch, and don't downgrade the driver to 470.",
        "Install the cu121 build of torch; do not roll back the driver.",
        "Install the cu121 build of torch, and don't forget to update the driver to 550.",
    ],
)
def test_a_refused_downgrade_or_a_remembered_upgrade_passes(action: str) -> None:
    assert (470,) not in driver_targets(action)
    assert validate(draft(action, _TOO_OLD[0]), _installed_535()).premises_ok, action


def test_a_remembered_target_is_a_target() -> None:
    action = "Install the cu121 build of torch, and don't forget to downgrade the driver to 470."
    assert (470,) in driver_targets(action)
