"""An answer that installs again the release shown installed and rejecting the call fails
(issue 16, re-review: "pip install accelerate==0.23.0 --force-reinstall" and "Reinstall
accelerate==0.23.0." passed on an incident whose logs show accelerate==0.23.0 and whose message
is that release's ``unexpected keyword argument``)."""

from __future__ import annotations

from typing import Any

import pytest

from rca.suggestion.context import AnalysisContext
from rca.suggestion.reinstalled_release import reinstalled_release_violations
from rca.suggestion.validation import validate
from tests.support.evidence import draft, evidence

_RUNBOOK = "accelerate-transformers-version-pair"
_KWARG = "Accelerator.__init__() got an unexpected keyword argument 'use_seedable_sampler'"
_ATTRIBUTE = "AttributeError: module 'transformers' has no attribute 'LlavaNextProcessor'"


def _ctx(message: str, logs: tuple[str, ...]) -> Any:
    return AnalysisContext(
        error_type="TypeError",
        message=message,
        shape_diff=[],
        frames=[],
        logs=[{"message": line} for line in logs],
        evidence=evidence((_RUNBOOK, 0.9)),
    )


@pytest.mark.parametrize(
    ("message", "logs", "action"),
    [
        (_KWARG, ("accelerate==0.23.0",), "pip install accelerate==0.23.0 --force-reinstall"),
        (_KWARG, ("accelerate==0.23.0",), "Reinstall accelerate==0.23.0."),
        (_KWARG, ("accelerate==0.23.0",), "Pin accelerate to 0.23.0 in requirements.txt."),
        (
            _KWARG,
            ("Requirement already satisfied: accelerate in ./site-packages (0.23.0)",),
            "Run `pip install accelerate==0.23`.",
        ),
        (_ATTRIBUTE, ("transformers==4.38.2",), "Install transformers 4.38.2 again."),
    ],
)
def test_reinstalling_the_failing_release_fails(
    message: str, logs: tuple[str, ...], action: str
) -> None:
    check = validate(draft(action, _RUNBOOK, "A clean install."), _ctx(message, logs))
    assert not check.premises_ok
    assert any("installing it again changes nothing" in c for c in check.complaints)


@pytest.mark.parametrize(
    ("message", "logs", "action"),
    [
        (_KWARG, ("accelerate==0.23.0",), "Upgrade accelerate to 0.26.0."),
        (_KWARG, ("accelerate==0.23.0",), "pip install -U accelerate"),
        (_KWARG, ("accelerate==0.23.0",), "pip install accelerate==0.26.1"),
        (_ATTRIBUTE, ("transformers==4.38.2",), "pip install transformers==4.39.0"),
    ],
)
def test_moving_to_another_release_passes(message: str, logs: tuple[str, ...], action: str) -> None:
    assert reinstalled_release_violations(action, message, list(logs)) == []


def test_a_matched_pair_moves_something() -> None:
    message = "module 'jaxlib' has no attribute 'xla_extension'"
    logs = ["jax==0.4.20", "jaxlib==0.4.13"]
    assert (
        reinstalled_release_violations("pip install jax==0.4.20 jaxlib==0.4.20", message, logs)
        == []
    )


def test_no_api_rejection_no_complaint() -> None:
    message = "ImportError: libcudart.so.11.0: cannot open shared object file"
    assert (
        reinstalled_release_violations(
            "pip install --force-reinstall torch==2.0.1", message, ["torch==2.0.1"]
        )
        == []
    )
