"""Releases an incident names as the cause of its failure, and whether a suggestion moves a
package towards one.

A version fix that goes the wrong way is harmful: "jax.core.pp_eqn_rules was removed in JAX
v0.4.34" is not fixed by upgrading jax, "`keras.optimizers.legacy` is not supported in Keras
3" not by a newer Keras, "PyTorch >= 2.1 is required but found 2.0.1" not by a lower torch.
The text names a side of a release that is bad -- from the release on ("removed in",
"introduced in", "broken since", "incompatible with X>=a", "requires X<a", "downgrade to
'X<a'", "X a, but this is not yet supported") or below it ("requires X>=a", "X>=a is
required", the lower end of "versions above or equal to a and strictly below b").

:func:`named_causes` reads them from the message and log lines into :class:`NamedCause`
facts; :func:`moves_towards` takes the package moves an action makes ("upgrade jax",
"downgrade numpy to 1.26", "pip install 'numpy<2'", "pin torch==2.0.1", every package of
``pip install -U a b``; read by :mod:`.package_moves`) and says which land on a named bad
side. The premise check (:mod:`.premises`) rejects such a suggestion, offline
or from an LLM (also one that moves "the library" without naming it, when the cause is the
incident's release-notes row and the action names no other package: :func:`moves_towards`),
and :mod:`.version_pairs` turns a named cause into the direction away from it.
Every pattern is the generic wording of a kind of line, run by :mod:`ingest.linear_regex`
over bounded lines.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ingest.linear_regex import compile as linear
from rca.suggestion.api_changes import documented_change
from rca.suggestion.incident_setting import ALIASES, PACKAGES
from rca.suggestion.package_moves import NOT_PACKAGES as _NOT_PACKAGES
from rca.suggestion.package_moves import UNNAMED, Move, moves
from rca.suggestion.package_moves import package_name as _package
from rca.suggestion.version_numbers import bounded_lines, padded, parse_version

__all__ = [
    "Move",
    "NamedCause",
    "away_from",
    "incident_causes",
    "moves",
    "moves_towards",
    "named_causes",
]

_PKG = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"
_NUM = r"\d+(?:\.\d+)*"
_Q = r"[`'\"]?"
_MAX_CAUSES = 8

#: ``(pattern, side)``: ``side`` "from" = the release and later are bad, "below" = earlier
#: releases are bad, "op" = read from a requirement's operator (<, <= bad from; >=, > below),
#: "from-op" = the operator of a release said to break (>=, > bad from), "after" = bad from
#: the release after the one named ("3.20.x or lower").
_CAUSES = (
    # "jax.core.JaxprEqn was removed in JAX v0.6.0", "np.NaN was removed in the NumPy 2.0
    # release", "will be **removed in 0.17**" (the package is then the dotted name before).
    (
        linear(
            rf"\bremoved in (?:the )?(?:(?P<pkg>{_PKG})\s+)?(?:version\s+)?v?(?P<ver>{_NUM})",
            ignore_case=True,
        ),
        "from",
    ),
    # "introduced in transformers 4.40", "broken since numpy 2.0", "fails starting with 2.1".
    (
        linear(
            r"\b(?:introduced|regression|regressed|broken|breaks|broke|fails|failing|stopped"
            rf" working)\b[^\n]{{0,40}}?\b(?:in|since|by|after|starting (?:with|from))\s+"
            rf"{_Q}(?P<pkg>{_PKG}){_Q}\s*(?:version\s*)?v?(?P<ver>{_NUM})",
            ignore_case=True,
        ),
        "from",
    ),
    # "incompatible with torch>=2.3", "does not support numpy >= 2".
    (
        linear(
            r"\b(?:incompatible|not compatible|does not support|doesn't support|not supported|"
            rf"does not work|doesn't work)\b[^\n]{{0,30}}?\b(?:with|on|for|in)\s+{_Q}"
            rf"(?P<pkg>{_PKG})\s*(?P<op>>=|>)\s*(?P<ver>{_NUM})",
            ignore_case=True,
        ),
        "from-op",
    ),
    # "`keras.optimizers.legacy` is not supported in Keras 3".
    (
        linear(
            rf"\bnot (?:yet )?supported (?:in|by|with|on) {_Q}(?P<pkg>{_PKG}){_Q}"
            rf" v?(?P<ver>{_NUM})",
            ignore_case=True,
        ),
        "from",
    ),
    # "... is Keras 3, but this is not yet supported in Transformers".
    (
        linear(
            rf"\b(?P<pkg>{_PKG}) v?(?P<ver>{_NUM})(?:\.x)?,? but (?:this|it) is not (?:yet )?"
            r"(?:supported|compatible)",
            ignore_case=True,
        ),
        "from",
    ),
    # "requires protobuf<4", "only supported with numpy<2", "needs torch>=2.1".
    (
        linear(
            r"\b(?:requires?|required|needs?|only supports?|only supported with|only works with|"
            rf"supports? only)\b[^\n]{{0,40}}?{_Q}(?P<pkg>{_PKG})\s*(?P<op><=|<|>=|>)\s*"
            rf"(?P<ver>{_NUM})",
            ignore_case=True,
        ),
        "op",
    ),
    # "PyTorch >= 2.1 is required but found 2.0.1", "'numpy<2' is required".
    (
        linear(
            rf"{_Q}(?P<pkg>{_PKG}){_Q}\s*(?:version\s*)?(?P<op><=|<|>=|>)\s*(?P<ver>{_NUM}){_Q}"
            r"\s+is\s+(?:required|needed)\b",
            ignore_case=True,
        ),
        "op",
    ),
    # "downgrade to 'numpy<2'", "Downgrade the protobuf package to 3.20.x or lower".
    (
        linear(
            rf"\bdowngrade to {_Q}(?P<pkg>{_PKG})\s*(?P<op><=?)\s*(?P<ver>{_NUM})", ignore_case=True
        ),
        "op",
    ),
    (
        linear(
            rf"\bdowngrade (?:the )?{_Q}(?P<pkg>{_PKG}){_Q} (?:package )?to (?:version )?"
            rf"(?P<ver>{_NUM})(?:\.x)? or (?:lower|earlier|older)",
            ignore_case=True,
        ),
        "after",
    ),
)
#: "Tensorflow versions above or equal to 2.5.0 and strictly below 2.8.0".
_RANGE = linear(
    rf"\b(?P<pkg>{_PKG}) versions? (?:above or equal to|>=|from) (?P<lo>{_NUM}) (?:and|to)"
    rf" (?:strictly )?(?:below|under|<) (?P<hi>{_NUM})",
    ignore_case=True,
)
#: The dotted name a "will be removed in 0.17" sentence is about.
_DOTTED = linear(r"(?P<top>[A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


@dataclass(frozen=True)
class NamedCause:
    """``package`` releases on one ``side`` of ``release`` are what the incident says fails:
    "from" = ``release`` and later (never move up into them), "below" = releases before it."""

    package: str
    release: tuple[int, ...]
    side: str
    phrase: str
    #: From the release-notes row of the name the code uses (:mod:`.api_changes`): the
    #: package the incident is about, which "upgrade the library" then means.
    documented: bool = False

    def bad(self, version: tuple[int, ...]) -> bool:
        """Whether ``version`` is on the named bad side (never, for a cause with no release:
        only a way is named, not where the installed release stands)."""
        if not self.release:
            return False
        if self.side == "from":
            return padded(version) >= padded(self.release)
        return padded(version) < padded(self.release)

    def describe(self) -> str:
        release = ".".join(map(str, self.release))
        side = f"{release} and later" if self.side == "from" else f"releases before {release}"
        if not self.release:
            side = "releases " + ("newer" if self.side == "from" else "older")
            side += " than the installed one"
        return f"{self.package} {side} (the incident says: {self.phrase})"


def _side(kind: str, op: str) -> tuple[str, int]:
    """The bad side and how far past the number it starts (1: the next release)."""
    if kind == "from-op":  # "incompatible with X>=a": a on; "> a": the next release on
        return "from", int(op == ">")
    if kind == "op":
        return {"<": ("from", 0), "<=": ("from", 1), ">=": ("below", 0), ">": ("below", 1)}.get(
            op, ("from", 0)
        )
    return ("from", 1) if kind == "after" else (kind, 0)


def _next(version: tuple[int, ...]) -> tuple[int, ...]:
    """The first release after every ``version`` prefix release ("3.20.x or lower": 3.21)."""
    return (*version[:-1], version[-1] + 1) if version else version


def _cause(package: str, version: str, side: str, shift: int, phrase: str) -> NamedCause | None:
    release = parse_version(version)
    package = _package(package)
    if not release or not package or package in _NOT_PACKAGES or package[0].isdigit():
        return None
    if shift:  # "<= a", "> a", "a.x or lower": the bad side starts at the next release
        release = _next(release)
    return NamedCause(package, release, side, phrase.strip()[:120])


def _line_causes(line: str) -> list[NamedCause]:
    found: list[NamedCause] = []
    for pattern, kind in _CAUSES:
        for match in pattern.finditer(line):
            groups = match.groupdict()
            package = groups.get("pkg") or ""
            if not package or _package(package) in _NOT_PACKAGES:
                dotted = _DOTTED.search(line[: match.start()])
                package = dotted.group("top") if dotted else ""
            side, shift = _side(kind, groups.get("op") or "")
            cause = _cause(package, match.group("ver"), side, shift, match.group(0))
            if cause is not None:
                found.append(cause)
    for match in _RANGE.finditer(line):
        for number, side in ((match.group("lo"), "below"), (match.group("hi"), "from")):
            cause = _cause(match.group("pkg"), number, side, 0, match.group(0))
            if cause is not None:
                found.append(cause)
    return found


def named_causes(texts: Sequence[str]) -> tuple[NamedCause, ...]:
    """The causes the message and log lines name, first seen first, at most a few."""
    causes: list[NamedCause] = []
    for line in bounded_lines(texts):
        for cause in _line_causes(line):
            if all(
                (c.package, c.release, c.side) != (cause.package, cause.release, cause.side)
                for c in causes
            ):
                causes.append(cause)
    return tuple(causes[:_MAX_CAUSES])


def incident_causes(message: str, texts: Sequence[str]) -> tuple[NamedCause, ...]:
    """The causes the texts name, and the release the release-notes tables say removed (or
    added) a name the message says is missing (:mod:`.api_changes`): the code needs a
    release below the removal (or at the addition) whatever the text says."""
    causes = named_causes([message, *texts])
    documented = documented_change(message, texts)
    if documented is None:
        return causes
    release, side = documented.bad_release, documented.bad_side
    if not release:
        return causes
    cause = NamedCause(_package(documented.package), release, side, documented.note[:120], True)
    key = (cause.package, cause.release, cause.side)
    if any((c.package, c.release, c.side) == key for c in causes):  # the text says it too
        return tuple(
            replace(c, documented=True) if (c.package, c.release, c.side) == key else c
            for c in causes
        )
    return (*causes, cause)[:_MAX_CAUSES]


def _lands_on(move: Move, cause: NamedCause) -> bool:
    """Whether the move takes the package onto (or keeps it on) the cause's bad side; for a
    cause that names a way but no release ("triton ... is too old"), whether its verb or kind
    moves the package that way ("downgrade triton to 2.0")."""
    if not cause.release:
        way = "up" if move.kind in ("up", "floor") else "down" if move.kind == "down" else ""
        return (move.way or way) == ("up" if cause.side == "from" else "down")
    if move.kind in ("up", "down"):
        return (move.kind == "up") == (cause.side == "from")
    if move.kind == "exact":
        return cause.bad(move.version)
    if move.kind == "floor":  # unbounded above: the resolver picks the newest
        return cause.side == "from"
    if cause.side == "from":  # a ceiling lets in what lies below it
        top = padded(move.version)
        return top > padded(cause.release) or (move.inclusive and top >= padded(cause.release))
    limit = padded(move.version)
    return limit < padded(cause.release) or (not move.inclusive and limit <= padded(cause.release))


def _family(name: str) -> str:
    """The framework an import or pip name belongs to (``keras`` and ``tf``: tensorflow),
    else its pip name: two names of one family are one package for an unnamed move."""
    pip = _package(name)
    key = pip.replace("-", "_")
    return PACKAGES.get(key) or ALIASES.get(key) or pip


@functools.cache
def _known_packages() -> frozenset[str]:
    """The families of every package the incident facts know by name: the frameworks and
    the release-notes tables' packages."""
    from rca.suggestion.api_changes import load_changes

    names = {*PACKAGES, *ALIASES, *(row.package for row in load_changes())}
    return frozenset(_family(name) for name in names)


def _unnamed_package(action: str, causes: Sequence[NamedCause]) -> str:
    """The package an unnamed move of ``action`` ("upgrade the library") is about: the
    release-notes row's, when the action names no other known package ("upgrade the
    library, or hold jax" is about a library other than jax); else none."""
    documented = next((c.package for c in causes if c.documented), "")
    if not documented:
        return ""
    words = "".join(c if c.isalnum() or c in "_-" else " " for c in action.lower()).split()
    known = _known_packages()
    named = {_family(w) for w in words if _family(w) in known}
    named |= {_family(m.package) for m in moves(action) if m.package != UNNAMED}
    return documented if named <= {_family(documented)} else ""


def moves_towards(action: str, causes: Sequence[NamedCause]) -> list[str]:
    """Why ``action`` moves a package towards a release the incident names as the cause, one
    phrase per such move (empty: it does not). A move that names no package is the
    release-notes row's package (:func:`_unnamed_package`)."""
    if not causes:
        return []
    reasons: list[str] = []
    for move in moves(action):
        if move.package == UNNAMED:
            move = replace(move, package=_unnamed_package(action, causes))
            if not move.package:
                continue
        for cause in causes:
            if cause.package == move.package and _lands_on(move, cause):
                reason = f"it moves {move.package} towards {cause.describe()}"
                if reason not in reasons:
                    reasons.append(reason)
    return reasons


def away_from(cause: NamedCause) -> tuple[str, str, str]:
    """(package, direction, target) of the move away from a named cause."""
    release = ".".join(map(str, cause.release))
    if cause.side == "from":
        return cause.package, "downgrade", f"< {release}"
    return cause.package, "upgrade", f">= {release}"
