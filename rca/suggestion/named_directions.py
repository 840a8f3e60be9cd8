"""Directions a message names for a package without a version found to compare with.

:mod:`rca.suggestion.version_pairs` reads a requirement against the version installed; some
messages give the direction in words instead: a newer release asked for without a number
("Cannot find a working triton installation. Either the package is not installed or it is
too old", "make sure you have the latest version of `bitsandbytes` installed"), or a ceiling
the message tells the user to go below ("Downgrade the protobuf package to 3.20.x or lower",
"downgrade to 'numpy<2'"). Each pattern is the generic wording of a kind of line.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear

__all__ = ["NAMED_CEILINGS", "NAMED_NEWER", "named_direction"]

_PKG = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"
_NUM = r"\d+(?:\.\d+)*"
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
