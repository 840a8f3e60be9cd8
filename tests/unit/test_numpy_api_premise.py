"""NumPy's C-API check says which way numpy must move (issue 16, item 2).

NumPy's ABI is forward but not backward compatible (NumPy, *For downstream package
authors*): "module compiled against API version 0xA but this version of numpy is 0xB" with
A above B says the installed numpy is older than the module's build, so "pin numpy<2" (or a
NumPy-2 build of the module) moves the wrong way; "A module that was compiled using NumPy
1.x cannot be run in NumPy 2.x" says the converse. :mod:`rca.suggestion.numpy_api` reads
``numpy-older-than-build`` / ``numpy-newer-than-build``; the hex numbers are compared with
each other only and never become step values.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.numpy_api import numpy_api_direction, numpy_api_facts
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from rca.suggestion.version_pairs import version_values
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear
from tests.support.scripted_llm import scripted_llm

_ABI = ("version-numpy2-abi", 0.9)
_HEX = (
    "RuntimeError: module compiled against {kind} version {built} but this version of numpy"
    " is {run}"
)
_ONE_ON_TWO = (
    "A module that was compiled using NumPy 1.x cannot be run in\nNumPy {run} as it may crash."
    " To support both 1.x and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0."
)
_PIN = "Pin `numpy<2` in the requirements until every compiled dependency supports NumPy 2."
_UPGRADE = "Upgrade numpy to a release at least as new as the one the failing module was built"


@pytest.mark.parametrize(
    ("text", "direction"),
    [
        (_HEX.format(kind="API", built="0xe", run="0xd"), "older"),
        (_HEX.format(kind="API", built="0x10", run="0xf"), "older"),
        (_HEX.format(kind="API", built="0xc", run="0x9"), "older"),  # 0xc = 12 > 9
        (_HEX.format(kind="ABI", built="0x2000000", run="0x1000009"), "older"),
        (_HEX.format(kind="ABI", built="0x1000009", run="0x2000000"), "newer"),
        (
            "UserWarning: Failed to initialize NumPy: "
            + _HEX.format(kind="API", built="0x10", run="0xf"),
            "older",
        ),
        (_ONE_ON_TWO.format(run="2.0.0"), "newer"),
        (_ONE_ON_TWO.format(run="2.4.2"), "newer"),
        (_HEX.format(kind="API", built="0xd", run="0xd"), None),
        ("ImportError: numpy.core.multiarray failed to import", None),
        ("module compiled against API version 0xe but this version of torch is 0xd", None),
    ],
)
def test_the_check_says_which_way_numpy_stands(text: str, direction: str | None) -> None:
    assert numpy_api_direction([text]) == direction


def test_two_checks_that_disagree_claim_nothing() -> None:
    older = _HEX.format(kind="API", built="0xe", run="0xd")
    assert numpy_api_direction([older, _ONE_ON_TWO.format(run="2.0.0")]) is None


@settings(max_examples=40, deadline=None)
@given(
    built=st.integers(1, 0x2000000),
    run=st.integers(1, 0x2000000),
    kind=st.sampled_from(["API", "ABI"]),
    prefix=st.sampled_from(["", "RuntimeError: ", "E   ", "cv2 import failed: "]),
    upper=st.booleans(),
)
def test_metamorphic_any_hex_numbers_read_by_their_order(
    built: int, run: int, kind: str, prefix: str, upper: bool
) -> None:
    def hexed(n: int) -> str:
        return f"0x{n:X}" if upper else hex(n)

    text = prefix + _HEX.format(kind=kind, built=hexed(built), run=hexed(run))
    expected = None if built == run else ("older" if run < built else "newer")
    assert numpy_api_direction([text, "ImportError: numpy.core.multiarray failed to import"]) == (
        expected
    )
    # the C-API numbers are never numpy versions for a step to name
    values = version_values(text, [])
    assert hexed(built) not in values.values() and hexed(run) not in values.values()


@settings(max_examples=15, deadline=None)
@given(
    module=st.sampled_from(["cv2", "torch._C", "pandas._libs.lib", "my_ext", "scipy.spatial"]),
    pair=st.sampled_from([("0xe", "0xd"), ("0x10", "0xf"), ("0xb", "0xa"), ("0x11", "0x10")]),
)
def test_metamorphic_other_modules_are_never_told_to_pin_numpy_lower(
    module: str, pair: tuple[str, str]
) -> None:
    message = (
        f"{_HEX.format(kind='API', built=pair[0], run=pair[1])}\n"
        f'  File "/app/serve.py", line 3, in <module>\n    import {module}\n'
        "ImportError: numpy.core.multiarray failed to import"
    )
    ctx = message_context(message, _ABI)
    assert "numpy-older-than-build" in read_premises(ctx).facts
    action = OfflineProvider().suggest(ctx).action
    assert not action.startswith("Pin `numpy<2`"), action
    assert action.startswith(_UPGRADE), action
    assert not validate(draft(_PIN, _ABI[0]), ctx).premises_ok


def test_the_converse_message_keeps_the_pin_and_refuses_the_upgrade() -> None:
    ctx = message_context(_ONE_ON_TWO.format(run="2.1.3"), _ABI)
    assert "numpy-newer-than-build" in read_premises(ctx).facts
    assert not OfflineProvider().suggest(ctx).action.startswith(_UPGRADE)
    assert validate(draft(_PIN, _ABI[0]), ctx).premises_ok
    upgrade = (
        "Upgrade numpy to a release at least as new as the one the failing module was built"
        " against (`pip install --upgrade numpy`), or reinstall that module built against the"
        " installed numpy."
    )
    assert not validate(draft(upgrade, _ABI[0]), ctx).premises_ok


def test_an_llm_pinning_numpy_lower_is_reasked_when_numpy_is_older(httpserver) -> None:
    answers = [
        {
            "action": "Pin numpy<2 in the requirements until every compiled dependency"
            " supports NumPy 2.",
            "reason": "Extensions built against the 1.x ABI cannot load with 2.x.",
            "runbook": _ABI[0],
            "confidence": 0.8,
        },
        {
            "action": "Upgrade numpy (`pip install --upgrade numpy`) to at least the release"
            " the module was built against.",
            "reason": "The module was compiled against C-API 0xe; the installed numpy is 0xd.",
            "runbook": _ABI[0],
            "confidence": 0.7,
        },
    ]
    provider, requests = scripted_llm(httpserver, *answers)
    ctx = message_context(_HEX.format(kind="API", built="0xe", run="0xd"), _ABI)
    outcome = write_suggestion(ctx, provider)
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert outcome.draft.action == answers[1]["action"] and outcome.validation.ok


@given(
    st.text(
        alphabet=st.sampled_from(list("compiled against API version 0xe numpy is\n")), max_size=3000
    )
)
def test_arbitrary_text_never_raises(text: str) -> None:
    numpy_api_facts([text])


def test_long_text_is_read_in_linear_time() -> None:
    def read(n: int) -> None:
        text = "compiled against API version 0xe " * n + "this version of numpy is"
        numpy_api_facts([text, "compiled using numpy 1.x cannot be run in " * n])

    assert_linear(read, 500, 20_000)
