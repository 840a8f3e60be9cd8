"""Directions a message names for a package without a version found to compare with.

:mod:`rca.suggestion.version_pairs` reads a requirement against the version installed; some
messages give the direction in words instead: a newer release asked for without a number
("Cannot find a working triton installation. Either the package is not installed or it is
too old", "make sure you have the latest version of `bitsandbytes` installed"), or a ceiling
the message tells the user to go below ("Downgrade the protobuf package to 3.20.x or lower",
"downgrade to 'numpy<2'"). Each pattern is the generic wording of a kind of line.

Requirements worded in other ways than :mod:`.version_pairs` reads, with the version found
("X 1.0 is installed, but 2.0 or higher is required", pip's older resolver's "x 1.0 has
requirement y>=2, but you'll have y 1.5", "expected y version >= 2, got 1.5") or without it
("y>=2 is required", "requires y<2", "the minimum required version of y is 2", "y is too
old"), are read by :func:`stated_requirement` into a package, a specifier and the version
found, which :mod:`.version_pairs` compares.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear

__all__ = ["NAMED_CEILINGS", "NAMED_NEWER", "STATED", "named_direction", "stated_requirement"]

_PKG = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"
_NUM = r"\d+(?:\.\d+)*"
_SPEC = rf"(?:[<>=!~]=?\s*{_NUM})(?:\s*,\s*[<>=!~]=?\s*{_NUM})*"
#: Words for "or newer" / "or older" after a version.
_NEWER = r"(?:higher|newer|later|above|greater)"
_MAX_LINES = 400
_MAX_LINE = 2000

#: A newer release asked for without a number: "Cannot find a working triton installation.
#: Either the package is not installed or it is too old", "make sure you have the latest
#: version of `bitsandbytes` installed", "please upgrade your accelerate version".
NAMED_NEWER = (
    linear(
        rf"find a working (?P<pkg>{_PKG}) installation\b[^\n]{{0,160}}?\btoo old\b",
        ignore_case=True,
    ),
    linear(rf"\blatest version of [`'\"]?(?P<pkg>{_PKG})[`'\"]?", ignore_case=True),
    linear(
        rf"please (?:upgrade|update) your [`'\"]?(?P<pkg>{_PKG})[`'\"]? (?:version|package)",
        ignore_case=True,
    ),
)
#: A ceiling the message itself names: "Downgrade the protobuf package to 3.20.x or lower",
#: "downgrade to 'numpy<2'".
NAMED_CEILINGS = (
    linear(
        rf"\bdowngrade (?:the )?[`'\"]?(?P<pkg>{_PKG})[`'\"]? (?:package )?to (?:version )?"
        rf"(?P<ver>{_NUM})(?P<x>\.x)?",
        ignore_case=True,
    ),
    linear(
        rf"\bdowngrade to [`'\"]?(?P<pkg>{_PKG})\s*(?P<op><=?)\s*(?P<ver>{_NUM})", ignore_case=True
    ),
)


#: Requirements with the version found (``have``) or without it; ``spec`` a specifier, or
#: ``need`` a version with ``op`` or ``newer`` ("or higher"). Each is one kind of line.
STATED = (
    # "transformers 4.30.0 is installed, but 4.36.0 or higher is required" /
    # "... but version >= 4.36 is required".
    linear(
        rf"(?P<pkg>{_PKG})(?: version)?:? v?(?P<have>{_NUM}) is installed,? but (?:version )?"
        rf"(?P<op>[<>=]=?)?\s*(?P<need>{_NUM})(?P<newer> or {_NEWER})? is (?:required|needed)",
        ignore_case=True,
    ),
    # pip's legacy resolver: "x 1.0 has requirement y>=2, but you'll have y 1.5 which is
    # incompatible."
    linear(
        rf"{_PKG} {_NUM}\S* has requirement (?P<pkg>{_PKG})\s*(?P<spec>{_SPEC}), but you'll"
        rf" have (?P<found>{_PKG}) (?P<have>{_NUM})",
        ignore_case=True,
    ),
    # "Expected torch version >= 2.1, got 2.0.1", "expected jaxlib version 0.4.6 but found 0.3".
    linear(
        rf"expected (?P<pkg>{_PKG}) version (?P<op>[<>=]=?)?\s*(?P<need>{_NUM}),? (?:but )?"
        rf"(?:got|found|have) (?P<have>{_NUM})",
        ignore_case=True,
    ),
    # "flash_attn>=2.1.0 is required", "numpy<2 is required", "torch version >= 2.0 is
    # required" (no "but found": the error is the requirement not being met).
    linear(
        rf"[`'\"]?(?P<pkg>{_PKG})[`'\"]?(?: version)?\s*(?P<spec>{_SPEC})[`'\"]?"
        rf" is (?:required|needed)\b",
        ignore_case=True,
    ),
    # "torch 2.0 or higher is required", "requires transformers 4.36 or newer".
    linear(
        rf"(?:\brequires?\s+(?:at least\s+)?)?[`'\"]?(?P<pkg>{_PKG})[`'\"]?(?: version)? v?"
        rf"(?P<need>{_NUM})(?P<newer> or {_NEWER})\b",
        ignore_case=True,
    ),
    # "requires at least accelerate 0.20", "the minimum required version of peft is 0.6".
    linear(
        rf"\brequires? at least [`'\"]?(?P<pkg>{_PKG})[`'\"]?(?: version)? v?(?P<need>{_NUM})"
        rf"|\bminimum (?:required |supported )?version of [`'\"]?(?P<pkg2>{_PKG})[`'\"]? is v?"
        rf"(?P<need2>{_NUM})",
        ignore_case=True,
    ),
    # A ceiling a requirement states: "requires numpy<2", "needs protobuf<=3.20".
    linear(
        rf"\b(?:requires?|required|needs?|install)\b[^\n]{{0,40}}?[`'\"]?(?P<pkg>{_PKG})\s*"
        rf"(?P<op><=|<)\s*(?P<need>{_NUM})",
        ignore_case=True,
    ),
)
#: Nouns a "too old" / "please upgrade" sentence may name that are not packages.
_NOT_PACKAGES = frozenset(
    {"gpu", "driver", "system", "code", "environment", "installation", "version", "it", "this"}
)
#: "Your triton version is too old", "pydantic 1.10 is too old".
_TOO_OLD = linear(
    rf"\b(?:your )?[`'\"]?(?P<pkg>{_PKG})[`'\"]?(?: version)?(?: v?(?P<have>{_NUM}))? is too"
    rf" (?P<age>old|new)\b",
    ignore_case=True,
)


def stated_requirement(
    message: str, skip: Collection[str] = ()
) -> tuple[str, str, str, str] | None:
    """(package, specifier, version found or "", age) for the first requirement a line of
    ``message`` states in one of the :data:`STATED` wordings ("<2.0", ">=2"), or, with an
    empty specifier, a package the line calls too "old" or too "new" (``age``). Lines in
    ``skip`` (a requirement another reader found met) are not read."""
    for line in (line[:_MAX_LINE] for line in message.splitlines()[:_MAX_LINES]):
        if line in skip:
            continue
        for pattern in STATED:
            if (match := pattern.search(line)) is None:
                continue
            groups = match.groupdict()
            package = groups.get("pkg") or groups.get("pkg2") or ""
            if package.lower() in _NOT_PACKAGES or (
                groups.get("found") and groups["found"].lower() != package.lower()
            ):
                continue
            have = groups.get("have") or ""
            if groups.get("spec"):
                return package, groups["spec"].replace(" ", ""), have, ""
            need = groups.get("need") or groups.get("need2") or ""
            op = groups.get("op") or (">=" if groups.get("newer") or not have else "==")
            return package, f"{op}{need}", have, ""
        if (match := _TOO_OLD.search(line)) and match.group("pkg").lower() not in _NOT_PACKAGES:
            return match.group("pkg"), "", match.group("have") or "", match.group("age").lower()
    return None


def named_direction(message: str, patterns: Sequence[LinearPattern]) -> tuple[str, str, str] | None:
    """(package, direction, target) for the first line one of ``patterns`` reads: a
    ceiling the message tells the user to go below, or a newer release asked for."""
    for line in (line[:_MAX_LINE] for line in message.splitlines()[:_MAX_LINES]):
        for pattern in patterns:
            if (match := pattern.search(line)) is None:
                continue
            groups = match.groupdict()
            if groups.get("ver") is None:
                return match.group("pkg"), "upgrade", "a newer release"
            ceiling = match.group("ver") + (".x" if groups.get("x") else "")
            return match.group("pkg"), "downgrade", f"{groups.get('op') or '<='} {ceiling}"
    return None
