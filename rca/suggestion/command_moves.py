"""The package moves an action's command lines make, read like the same moves in prose.

"sudo apt-get remove libcudnn6", "conda install numpy=1.26", "pip uninstall -y jax",
"brew install python@3.11": a command an LLM writes (bare, in a code span or in a fenced
block) moves packages as much as "remove cuDNN" or "pin numpy to 1.26" does. The managers,
their install and remove subcommands, the separator of an exact release and the options that
take a value are data (``rca/knowledge/package-commands.toml``, from each manager's CLI
reference); :mod:`.package_moves` reads pip's ``==`` specs and ``-U`` itself and takes the
other managers' exact releases from here, so one reading serves prose and commands. Removals
(a remove subcommand, or the prose verbs "uninstall"/"purge") are read here only: no
:class:`.package_moves.Move` kind says a package is gone. Only the parts an action says are
read (:func:`.negated_clauses.turned_down` parts are blanked). RE2 over a bounded prefix.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from ingest.linear_regex import compile as linear
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.package_names import NOT_PACKAGES, package_name
from rca.suggestion.version_numbers import parse_version

__all__ = ["COMMANDS_FILE", "CommandMove", "command_moves", "installs", "removed_packages"]

#: The managers are data: ``rca/knowledge/package-commands.toml``.
COMMANDS_FILE = Path(__file__).resolve().parent.parent / "knowledge" / "package-commands.toml"
_MAX_ACTION = 2000
_MAX_TOKENS = 16
_MARKS = "`'\"*,;:()[]"
#: Words that end a command written inside a sentence ("pip install x so it matches y").
_CLAUSE_WORDS = frozenset(
    {
        "a", "an", "the", "it", "its", "this", "that", "to", "and", "or", "so", "then",
        "because", "before", "after", "if", "for", "which", "when", "with", "until",
        "instead", "is", "are", "was", "be", "of", "in", "on",
    }
)  # fmt: skip


@dataclass(frozen=True)
class _Manager:
    install: frozenset[str]
    remove: frozenset[str]
    pin: str


def _load() -> tuple[dict[str, _Manager], frozenset[str], frozenset[str]]:
    with COMMANDS_FILE.open("rb") as handle:
        data = tomllib.load(handle)
    programs: dict[str, _Manager] = {}
    for spec in data["managers"].values():
        manager = _Manager(
            frozenset(str(s) for s in spec["install"]),
            frozenset(str(s) for s in spec["remove"]),
            str(spec["pin"]),
        )
        for program in spec["programs"]:
            programs[" ".join(str(program).lower().split())] = manager
    verbs = frozenset(str(v).lower() for v in data["removing_verbs"])
    return programs, verbs, frozenset(str(o) for o in data["value_options"])


_PROGRAMS, _REMOVING_VERBS, _VALUE_OPTIONS = _load()


def _escaped(word: str) -> str:
    """``word`` as a literal in a pattern (program names: letters, digits, ``-``, ``.``)."""
    return "".join(char if char.isalnum() or char == "_" else "\\" + char for char in word)


_PROGRAM_PATTERN = "|".join(
    r"\s+".join(_escaped(word) for word in program.split())
    for program in sorted(_PROGRAMS, key=len, reverse=True)
)
#: A command line: a manager's program (after ``sudo``, or anything not a word), then its
#: words up to the end of the code span, line or shell list.
_COMMAND = linear(
    rf"(?:^|[^\w./-])(?P<program>{_PROGRAM_PATTERN})\s+(?P<words>[^\n`;&|]{{1,300}})",
    ignore_case=True,
)
_PROSE_REMOVAL = linear(
    r"\b(?P<verb>" + "|".join(sorted(_REMOVING_VERBS)) + r")\s+(?:(?:the|any|all|every|your)\s+)?"
    r"[`'\"]?(?P<pkg>[A-Za-z][\w.+-]*[A-Za-z0-9+])",
    ignore_case=True,
)
_NAME = linear(r"^[A-Za-z][\w.+-]*$")
#: Groups by index: google-re2's own match (non-ASCII text) takes no group names.
_PROGRAM, _WORDS = (_COMMAND.groupindex[name] for name in ("program", "words"))
_REMOVED = _PROSE_REMOVAL.groupindex["pkg"]


@dataclass(frozen=True)
class CommandMove:
    """A package a command (or a prose removal) moves: ``kind`` "removed", "installed" (no
    release given), "exact" (at ``version``); ``start`` is where its command opens."""

    package: str
    kind: str
    version: tuple[int, ...] = ()
    start: int = 0


def _said(action: str) -> str:
    text = action[:_MAX_ACTION]
    for start, end in turned_down(text):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _package_words(words: list[str]) -> list[str]:
    """The package specs among a subcommand's words: options (and the values of those that
    take one) skipped, stopped at the first word of the sentence around the command."""
    specs: list[str] = []
    skip = False
    for raw in words[:_MAX_TOKENS]:
        word = raw.strip(_MARKS)
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _VALUE_OPTIONS
            continue
        if not word or word.lower() in _CLAUSE_WORDS:
            break
        specs.append(word)
        if raw.rstrip("`'\"*").endswith((".", ",", ";", ":")):
            break  # the sentence goes on past the command
    return specs


def _spec_move(spec: str, kind: str, pin: str, start: int) -> CommandMove | None:
    name, _, version = spec.partition(pin) if pin in spec else (spec, "", "")
    name = name.split("[")[0]
    if not _NAME.match(name) or any(op in name for op in "=<>~!@"):
        return None
    package = package_name(name)
    if package in NOT_PACKAGES:
        return None
    number = parse_version(version.lstrip("=v")) if version else ()
    if kind == "installed" and number:
        return CommandMove(package, "exact", number, start)
    return CommandMove(package, kind, (), start)


def command_moves(action: str) -> list[CommandMove]:
    """What the action's command lines (and its prose removals) do to packages, in order."""
    text = _said(action or "")
    found: list[CommandMove] = []
    for match in _COMMAND.finditer(text):
        manager = _PROGRAMS[" ".join(match.group(_PROGRAM).lower().split())]
        words = match.group(_WORDS).split()
        while words and words[0].startswith("-"):  # "apt-get -y install x"
            words = words[1:]
        if not words:
            continue
        sub = words[0].strip(_MARKS).lower()
        kind = "removed" if sub in manager.remove else "installed" if sub in manager.install else ""
        if not kind:
            continue
        for spec in _package_words(words[1:]):
            if (move := _spec_move(spec, kind, manager.pin, match.start(_PROGRAM))) is not None:
                found.append(move)
    commands = [m.span(_PROGRAM) for m in _COMMAND.finditer(text)]
    for match in _PROSE_REMOVAL.finditer(text):
        if any(start <= match.start() < start + 320 for start, _ in commands):
            continue  # "pip uninstall x": read with its command
        move = _spec_move(match.group(_REMOVED), "removed", "==", match.start())
        if move is not None:
            found.append(move)
    return sorted(found, key=lambda move: move.start)


def removed_packages(action: str) -> list[str]:
    """The packages the action removes (its commands' remove subcommands, "uninstall X")."""
    names = [move.package for move in command_moves(action) if move.kind == "removed"]
    return list(dict.fromkeys(names))


def installs(action: str) -> bool:
    """Whether the action also installs something (a command's install subcommand)."""
    return any(move.kind != "removed" for move in command_moves(action))
