"""Which way NumPy's C-API check says the installed numpy stands to an extension's build.

An extension module compiled against NumPy's C API checks, when it imports numpy, that the
installed numpy provides that API. NumPy's ABI is forward but not backward compatible
("binaries compiled against a given version of NumPy will still run correctly with newer
NumPy versions, but not with older versions": NumPy, *For downstream package authors*), so:

- "module compiled against API version 0xe but this version of numpy is 0xd" (or "ABI
  version") with the first number above the second: the installed numpy is OLDER than the
  one the module was built against. Upgrading numpy (or rebuilding the module against the
  installed one) fixes it; pinning numpy lower, or upgrading the module to a build for an
  even newer numpy, cannot.
- the first number below the second (an ABI mismatch), or "A module that was compiled using
  NumPy 1.x cannot be run in NumPy 2.x" (NumPy 2.0 migration guide): the installed numpy is
  NEWER than the build; the fix goes the other way.

The two hex numbers are C-API versions, compared with each other only: they are not numpy
release numbers, so they never become step placeholder values (:mod:`.version_pairs`).
Each pattern is NumPy's own wording of the check, run by :mod:`ingest.linear_regex` over
bounded lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.version_numbers import bounded_lines

__all__ = ["NUMPY_FACTS", "numpy_api_direction", "numpy_api_facts"]

#: The facts this module reads (:data:`rca.corpus.step_facts.FACTS`).
NUMPY_FACTS = frozenset({"numpy-older-than-build", "numpy-newer-than-build"})
_MAX_TEXTS = 400
_MAX_PREFIX = 4000

#: numpy/core/code_generators/generate_numpy_api.py: "module compiled against API version
#: 0x%x but this version of numpy is 0x%x" (and the ABI check's "ABI version").
_HEX_CHECK = linear(
    r"\bcompiled against (?:the )?A[PB]I version (?:0x)?(?P<built>[0-9a-f]{1,8})\b[^\n]{0,40}?"
    r"\bthis version of numpy is (?:0x)?(?P<run>[0-9a-f]{1,8})\b",
    ignore_case=True,
)
#: NumPy 2's check for a module built against 1.x: "A module that was compiled using NumPy
#: 1.x cannot be run in NumPy 2.0.0 as it may crash."
_ONE_ON_TWO = linear(
    r"\bcompiled using numpy (?P<built>\d+)\.x cannot be run in\s+numpy (?P<run>\d+)\b",
    ignore_case=True,
)


def _pairs(texts: Sequence[str]) -> list[tuple[int, int]]:
    """(built, running) for each check the texts show: the hex check per line, the 1.x/2.x
    wording over a bounded prefix of each text (NumPy breaks that sentence over lines)."""
    pairs = [
        (int(match.group("built"), 16), int(match.group("run"), 16))
        for line in bounded_lines(texts)
        if (match := _HEX_CHECK.search(line)) is not None
    ]
    for text in texts[:_MAX_TEXTS]:
        if (match := _ONE_ON_TWO.search(text[:_MAX_PREFIX])) is not None:
            pairs.append((int(match.group("built")), int(match.group("run"))))
    return pairs


def numpy_api_direction(texts: Sequence[str]) -> str | None:
    """ "older" or "newer": how the installed numpy stands to the build the NumPy C-API
    checks in ``texts`` name; None when none says, their numbers agree, or two disagree."""
    directions = {
        "older" if run < built else "newer" for built, run in _pairs(texts) if built != run
    }
    return directions.pop() if len(directions) == 1 else None


def numpy_api_facts(texts: Sequence[str]) -> set[str]:
    """``numpy-older-than-build`` or ``numpy-newer-than-build`` when a check line says so."""
    direction = numpy_api_direction(texts)
    return {f"numpy-{direction}-than-build"} if direction else set()
