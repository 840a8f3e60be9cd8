"""The package moves a suggested action makes, read from its words.

"upgrade jax", "downgrade numpy to 1.26", "pip install 'numpy<2'", "pin torch==2.0.1", "install
the latest bitsandbytes", and every package of ``pip install -U a b c``: each is a :class:`Move`
(up, down, an exact release, a floor or a ceiling). :mod:`.cause_releases` says which land on a
release the incident names as the cause, so that the premise check rejects a suggestion that
moves a package the way the evidence rules out. Every pattern is the generic wording of an
install command or an instruction, run by :mod:`ingest.linear_regex` over a bounded prefix.
Only the parts the action says are read (:func:`.negated_clauses.turned_down` parts are
blanked), and every move of a package is kept: "don't pin numpy<2; upgrade numpy to 2.1
instead" moves numpy to 2.1.

"Upgrade the library to the release that introduced the class" moves a package it does not
name: an :data:`UNNAMED` move (package ``""``), which :mod:`.cause_releases` reads as the
package the incident's release-notes row names, since that is the only library such a step
can mean for that incident.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ingest.linear_regex import compile as linear
from rca.suggestion.command_moves import command_moves
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.package_names import NOT_PACKAGES, package_name
from rca.suggestion.version_numbers import parse_version

__all__ = ["NOT_PACKAGES", "UNNAMED", "Move", "moves", "package_name"]

_PKG = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"
_NUM = r"\d+(?:\.\d+)*"
_Q = r"[`'\"]?"
_MAX_ACTION = 2000
_MAX_LISTED = 12
#: The words by which an action moves a package without naming it ("upgrade the library").
_UNNAMED_WORDS = frozenset({"library", "framework"})
UNNAMED = ""
"""The package of a move that names none (``Move.package``)."""

#: A package move in an action: "upgrade jax", "downgrade numpy to 1.26.4", "pin torch to
#: 2.0.1", "install tensorflow-addons 0.16.1" (a verb, the package, an optional version).
_VERB_MOVE = linear(
    r"\b(?P<verb>upgrade|update|bump|downgrade|roll back|revert|pin|install|reinstall|switch)\b"
    r"(?P<flags>(?:\s+(?:-U|--upgrade|--force-reinstall|-v))*)"
    r"(?:\s+(?:the|your|to|a|an))?(?:\s+(?P<age>latest|newest|newer|older|earlier|previous))?\s+"
    rf"{_Q}(?P<pkg>{_PKG}){_Q}(?:\s+(?:package|library))?"
    r"(?:\s*(?:(?:to|at|back to)\s+)?(?:(?:(?:an?|the)\s+)?(?:version|release|v)\s*)?"
    rf"(?P<op>==|>=|<=|~=|<|>|below |under |above )?\s*{_Q}v?(?P<ver>{_NUM})"
    r"(?P<tail>(?:\.x)?\s+or\s+(?:lower|earlier|older|higher|newer|later))?)?",
    ignore_case=True,
)
#: A requirement specifier anywhere in an action: "pip install 'numpy<2'", "torch==2.0.1".
_SPEC_MOVE = linear(
    rf"{_Q}(?P<pkg>{_PKG})\s*(?P<op>==|>=|<=|~=|<|>)\s*(?P<ver>{_NUM})"
    rf"(?:\s*,\s*(?P<op2><=|<)\s*(?P<ver2>{_NUM}))?"
)
#: ``pip install -U transformers accelerate peft`` (or ``--upgrade`` anywhere in the list):
#: every package of the list moves up.
_PIP_INSTALL = linear(r"\bpip3?\s+install\s+(?P<list>[A-Za-z0-9_.\[\],='\"<>~!* -]{1,300})")
_UPGRADE_FLAGS = frozenset({"-U", "--upgrade"})
#: "install the latest X" moves X up, "install an older X" down.
_UP_AGES = frozenset({"latest", "newest", "newer"})
_UP_VERBS = frozenset({"upgrade", "update", "bump"})
_DOWN_VERBS = frozenset({"downgrade", "roll back", "revert"})


@dataclass(frozen=True)
class Move:
    """A package move an action makes: ``kind`` "up"/"down" (no version), "exact", "floor"
    or "ceiling" (``inclusive`` for <=, "or lower"), at ``version``. ``way`` is the way its
    verb says it goes ("downgrade triton to 2.0": "down"; "" when the verb says none): an
    exact release is below or above the installed one as the verb says even when the
    incident shows no installed version to compare with."""

    package: str
    kind: str
    version: tuple[int, ...] = ()
    inclusive: bool = False
    way: str = field(default="", compare=False)


def _verb_move(verb: str, package: str, op: str, version: str, tail: str) -> Move:
    verb, op, tail = verb.lower(), op.strip(), tail.lower()
    number = parse_version(version) if version else ()
    if not number:
        if verb in _UP_VERBS:
            return Move(package, "up")
        return Move(package, "down" if verb in _DOWN_VERBS else "none")
    if op in ("<", "below", "under") or (
        op == "<=" or tail.endswith(("lower", "earlier", "older"))
    ):
        return Move(package, "ceiling", number, inclusive=op not in ("<", "below", "under"))
    if op in (">=", ">", "~=", "above") or tail:
        return Move(package, "floor", number)
    return Move(package, "exact", number)


_NONE = Move("", "none")


def _blanked(action: str) -> str:
    """``action`` with the parts it turns down blanked out (:func:`.negated_clauses.turned_down`):
    "don't pin numpy<2; upgrade numpy to 2.1 instead" moves numpy up only."""
    text = action[:_MAX_ACTION]
    for start, end in turned_down(text):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _overlapping(found: list[tuple[int, int, Move]], package: str, start: int, end: int) -> int:
    """The index of a move of ``package`` read from words overlapping ``start:end``, or -1."""
    for index, (begin, stop, move) in enumerate(found):
        if move.package == package and begin < end and start < stop:
            return index
    return -1


def moves(action: str) -> list[Move]:
    """The package moves ``action`` makes, in order, from the parts it says (not those it
    turns down): every move of a package, each read once (a requirement specifier inside a
    verb's move, "pin numpy<2", is that move)."""
    text = _blanked(action)
    found: list[tuple[int, int, Move]] = []
    for match in _VERB_MOVE.finditer(text):
        package = package_name(match.group("pkg"))
        if package in _UNNAMED_WORDS:
            package = UNNAMED
        elif package in NOT_PACKAGES:
            continue
        groups = match.groupdict()
        verb = match.group("verb")
        age = (groups.get("age") or "").lower()
        if "-u" in (groups.get("flags") or "").lower():  # pip install -U / --upgrade
            verb = "upgrade"
        elif age and verb.lower() not in _UP_VERBS | _DOWN_VERBS:  # "install the latest X"
            verb = "upgrade" if age in _UP_AGES else "downgrade"
        move = _verb_move(
            verb,
            package,
            groups.get("op") or "",
            groups.get("ver") or "",
            groups.get("tail") or "",
        )
        lowered = verb.lower()
        way = "down" if lowered in _DOWN_VERBS else "up" if lowered in _UP_VERBS else ""
        move = replace(move, way=way)
        found.append((match.start(), match.end(), move))
    for match in _PIP_INSTALL.finditer(text):
        tokens = match.group("list").split()[:_MAX_LISTED]
        if not _UPGRADE_FLAGS & set(tokens):
            continue
        for token in tokens:
            token = token.strip("'\",")
            package = package_name(token.split("[")[0])
            specified = any(op in token for op in "=<>~!")  # read by _SPEC_MOVE below
            if token.startswith("-") or specified or package in NOT_PACKAGES:
                continue
            if not package or package[0].isdigit():
                continue
            at = _overlapping(found, package, *match.span())
            if at < 0 or found[at][2].kind == "none":
                found.append((*match.span(), Move(package, "up")))
    for match in _SPEC_MOVE.finditer(text):
        package, op = package_name(match.group("pkg")), match.group("op")
        bounded = bool(match.group("op2"))  # "X>=a,<b" overrides the verb's reading of "X>=a"
        at = _overlapping(found, package, *match.span())
        if package in NOT_PACKAGES or (at >= 0 and found[at][2].kind != "none" and not bounded):
            continue
        if match.group("op2"):  # "X>=a,<b": bounded by its ceiling
            op, number = match.group("op2"), match.group("ver2")
        else:
            number = match.group("ver")
        kind = {"==": "exact", ">=": "floor", ">": "floor", "~=": "floor"}.get(op, "ceiling")
        move = Move(package, kind, parse_version(number), op == "<=")
        if at >= 0:
            found[at] = (found[at][0], found[at][1], replace(move, way=found[at][2].way))
        else:
            found.append((*match.span(), move))
    # Other managers' exact releases ("conda install numpy=1.26", "apt-get install x=1.2"):
    # pip's specs and flags are read above, so only a package they moved nowhere is added.
    for command in command_moves(action):
        if command.kind != "exact":
            continue
        if any(m.package == command.package and m.kind != "none" for *_, m in found):
            continue
        found.append(
            (command.start, command.start, Move(command.package, "exact", command.version))
        )
    return [move for _, _, move in sorted(found, key=lambda f: f[0]) if move.kind != "none"]
