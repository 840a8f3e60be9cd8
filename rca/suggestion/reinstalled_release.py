"""An answer that installs again the release the incident shows installed and failing.

When the message is the interpreter's own rejection of an API call (``got an unexpected
keyword argument``, ``has no attribute``, ``cannot import name``, ``takes 2 positional
arguments but 3 were given``: CPython's wordings) and the message or logs show the installed
release of a package (``accelerate==0.23.0``, ``Version: 0.23.0``, ``Requirement already
satisfied``: :func:`.environment_facts.installed_versions`), the installed releases are the
ones that reject the call. An answer whose every package move lands on the release already
installed ("pip install accelerate==0.23.0 --force-reinstall", "Reinstall
accelerate==0.23.0", "pin accelerate to 0.23.0") changes no code that runs: the call fails the
same way. Moves are read by :mod:`.package_moves` (prose and command lines alike); an answer
that also moves anything to another release ("jax==0.4.20 jaxlib==0.4.20" where one of them
is installed) is a matched pair and passes. RE2 over bounded text.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.environment_facts import installed_versions
from rca.suggestion.package_moves import moves
from rca.suggestion.version_numbers import bounded_lines, padded

__all__ = ["reinstalled_release_violations"]

_MAX_MESSAGE = 4000
_API_REJECTED = linear(
    r"unexpected keyword argument|has no attribute|cannot import name"
    r"|takes \d+ positional arguments? but \d+ (?:were|was) given"
    r"|got multiple values for (?:keyword )?argument",
    ignore_case=True,
)


def _show(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def reinstalled_release_violations(action: str, message: str, logs: Sequence[str]) -> list[str]:
    """Why ``action`` changes nothing (empty: it moves something, or the incident shows no
    API rejection or no installed release)."""
    if not _API_REJECTED.search((message or "")[:_MAX_MESSAGE]):
        return []
    installed = installed_versions(bounded_lines([message or "", *logs]))
    found = moves(action or "")
    if not installed or not found:
        return []
    same = [
        move
        for move in found
        if move.kind == "exact"
        and move.package in installed
        and padded(installed[move.package]) == padded(move.version)
    ]
    if len(same) != len(found):
        return []
    named = ", ".join(f"{move.package} {_show(move.version)}" for move in same)
    return [
        f"the incident shows {named} installed, the release that rejects the call: installing"
        " it again changes nothing; move it to a release whose API the code uses, or change"
        " the call"
    ]
