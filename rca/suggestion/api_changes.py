"""Which way a package must move when the code uses a name or argument a release added or
removed, from the packages' own release notes kept as data.

A missing name says nothing of the direction by itself: ``module 'numpy' has no attribute
'float'`` is a name a *newer* release removed (NumPy 1.24), ``module 'torch' has no
attribute 'no_grad'`` one an *older* release lacks (added in 0.4.0), and ``Accelerator.
__init__() got an unexpected keyword argument 'dispatch_batches'`` an argument accelerate
1.0 took away. Which release added or removed what is written in release notes and
migration guides; those facts are data, one TOML file per package under
``rca/knowledge/compatibility/api-changes`` (each citing its page and date; see the
compatibility README). This module only reads the name from the incident, finds the row,
and turns it into a :class:`~rca.suggestion.version_pairs.VersionChange` with a direction:

- a removed name or argument, with no installed version shown older than the removal:
  downgrade the package below the release that removed it (or port to the replacement);
- an added one, with no installed version shown at or above the addition: upgrade to it;
- a version the texts show installed that contradicts the row (a name "removed in 1.0"
  missing from 0.23): no conclusion, the generic steps stay. Only a row that also says when
  the name came (``added``) dates an install below the removal as too old for it.

The incident's texts are read by :mod:`ingest.linear_regex` patterns only; a table that does
not parse is skipped.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.linear_regex import compile as linear
from rca.suggestion.environment_facts import installed_versions
from rca.suggestion.version_numbers import bounded_lines as _lines
from rca.suggestion.version_numbers import padded as _padded
from rca.suggestion.version_numbers import parse_version as _version

__all__ = ["TABLES_DIR", "Change", "DocumentedChange", "documented_change", "load_changes"]

TABLES_DIR = Path(__file__).resolve().parent.parent / "knowledge" / "compatibility" / "api-changes"

_Q = r"['\"`]"
#: ``module 'numpy' has no attribute 'float'`` (also ``module 'PIL.Image' ...``).
_MODULE_ATTRIBUTE = linear(
    rf"module {_Q}(?P<module>[A-Za-z_][\w.]*){_Q} has no attribute {_Q}(?P<name>\w+){_Q}"
)
#: ``cannot import name 'soft_unicode' from 'markupsafe'``.
_IMPORT_NAME = linear(
    rf"cannot import name {_Q}(?P<name>\w+){_Q} from {_Q}(?P<module>[A-Za-z_][\w.]*){_Q}"
)
#: ``No module named 'torch._six'``: a *submodule* of an installed package (a dotted name; a
#: bare ``No module named 'keras'`` is a package that is not installed, not an API change).
_NO_SUBMODULE = linear(rf"No module named {_Q}?(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+){_Q}?")
#: ``'DataFrame' object has no attribute 'append'``; a qualified class (``'tensorrt_bindings.
#: tensorrt.Builder' object ...``) is named by its last part.
_OBJECT_ATTRIBUTE = linear(
    rf"{_Q}(?:[A-Za-z_]\w*\.)*(?P<owner>[A-Za-z_]\w*){_Q} object has no attribute"
    rf" {_Q}(?P<name>\w+){_Q}"
)
#: ``Accelerator.__init__() got an unexpected keyword argument 'dispatch_batches'``.
_KEYWORD = linear(
    r"(?P<callee>[A-Za-z_][\w.]*)\(\) got an unexpected keyword argument"
    rf" {_Q}?(?P<name>\w+)"
)
#: Keras: ``Argument(s) not recognized: {'lr': 0.002}``.
_NOT_RECOGNIZED = linear(rf"Argument\(s\) not recognized:\s*\{{\s*{_Q}(?P<name>\w+){_Q}")
#: A version a line shows for a package: ``torch: 2.3.0``, ``Jax: '0.1.58'``, ``PyTorch
#: Version 1.8.0``, ``accelerate==0.23.0``, ``keras   3.10.0`` (a pip list row).
_SHOWN_VERSION = linear(
    r"(?:^|[^\w.-])(?P<pkg>[A-Za-z][\w.-]{0,60}[A-Za-z0-9])"
    r"(?:\s*:\s*|\s*==\s*|\s+[Vv]ersion:?\s*|\s{2,})v?['\"]?(?P<ver>\d+\.\d+(?:\.\d+){0,3})"
)
#: ... and ``torch 2.1.0`` in a log line (not in the message, whose prose dates releases:
#: "deprecated in NumPy 1.20").
_LOOSE_VERSION = linear(
    r"(?:^|[^\w.-])(?P<pkg>[A-Za-z][\w.-]{0,60}[A-Za-z0-9]) v?(?P<ver>\d+\.\d+(?:\.\d+){0,3})"
)
#: Prose that dates a release instead of showing what is installed.
_DATING = linear(
    r"\b(?:deprecat\w*|removed|since|release\w*|requires?|supports?)\b", ignore_case=True
)
#: Import names whose pip name differs (``PIL`` is pillow); the rest normalise as pip does.
_PIP_NAMES = {"pytorch": "torch", "pil": "pillow", "sklearn": "scikit-learn"}
_KINDS = ("attribute", "argument", "module")


@dataclass(frozen=True)
class Change:
    """One row: ``names`` of ``kind`` ("attribute", "argument" or "module": a dotted submodule)
    in ``package``, added or removed in a release; ``owners``: the classes they belong to
    (empty: the modules'). A name or owner may be a pattern with one ``*`` at either end
    (``*Config``: any class whose name ends in ``Config``; ``*``: any callee)."""

    package: str
    modules: tuple[str, ...]
    kind: str
    names: frozenset[str]
    owners: frozenset[str]
    added: tuple[int, ...]
    removed: tuple[int, ...]
    replacement: str
    source: str


@dataclass(frozen=True)
class DocumentedChange:
    """The change a row gives for this incident: move ``package`` in ``direction`` to
    ``target``, because ``release`` added or removed ``name``."""

    package: str
    name: str
    direction: str  # "upgrade" or "downgrade"
    target: str  # ">= 0.4", "< 1.24"
    installed: str
    note: str  # "numpy 1.24 removed `float`; use the builtin type ..."
    source: str
    #: The releases the row rules out for this code: "from" ``bad_release`` on (a removal),
    #: or "below" it (an addition). A named cause for the premise check (:mod:`.cause_releases`).
    bad_side: str = ""
    bad_release: tuple[int, ...] = ()


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def _pip(name: str) -> str:
    name = name.strip().lower().replace("_", "-").replace(".", "-")
    return _PIP_NAMES.get(name, name)


def _strings(data: dict[str, Any], key: str) -> tuple[str, ...]:
    return tuple(str(v) for v in data.get(key, []) if isinstance(v, str))


def _rows(data: dict[str, Any]) -> list[Change]:
    package = str(data.get("package", ""))
    modules = _strings(data, "modules") or (package,)
    rows = []
    for raw in data.get("changes", []):
        if not isinstance(raw, dict) or raw.get("kind") not in _KINDS:
            continue
        added, removed = _version(str(raw.get("added", ""))), _version(str(raw.get("removed", "")))
        names = frozenset(_strings(raw, "names"))
        if not package or not names or not (added or removed):
            continue
        rows.append(
            Change(
                package,
                modules,
                str(raw["kind"]),
                names,
                frozenset(_strings(raw, "owners")),
                added,
                removed,
                str(raw.get("replacement", "")),
                # A row may cite its own page (a table gathered from several releases).
                str(raw.get("source") or data.get("source", "")),
            )
        )
    return rows


@functools.cache
def load_changes(directory: Path = TABLES_DIR) -> tuple[Change, ...]:
    """Every row of every table under ``directory`` (a file that does not parse is skipped)."""
    rows: list[Change] = []
    for path in sorted(directory.glob("*.toml")):
        try:
            rows.extend(_rows(tomllib.loads(path.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
    return tuple(rows)


@dataclass(frozen=True)
class _Use:
    """A name the message says is missing or rejected, and what it says owns it."""

    kind: str
    name: str
    module: str = ""  # the module it is missing from
    owner: str = ""  # the class it belongs to or the callee that rejected it


def _uses(message: str) -> list[_Use]:
    uses: list[_Use] = []
    for line in _lines([message]):
        for pattern in (_MODULE_ATTRIBUTE, _IMPORT_NAME):
            if match := pattern.search(line):
                uses.append(_Use("attribute", match.group("name"), module=match.group("module")))
        if match := _OBJECT_ATTRIBUTE.search(line):
            uses.append(_Use("attribute", match.group("name"), owner=match.group("owner")))
        if match := _KEYWORD.search(line):
            parts = [p for p in match.group("callee").split(".") if p and not p.startswith("__")]
            uses.append(_Use("argument", match.group("name"), owner=parts[-1] if parts else ""))
        if match := _NOT_RECOGNIZED.search(line):
            uses.append(_Use("argument", match.group("name")))
        if match := _NO_SUBMODULE.search(line):
            module = match.group("module")
            uses.append(_Use("module", module, module=module.split(".")[0]))
    return uses[:20]


def _words(lines: list[str]) -> set[str]:
    """The lower-case words of the texts (letters, digits and ``_``)."""
    words: set[str] = set()
    for line in lines:
        cleaned = "".join(c if c.isalnum() or c == "_" else " " for c in line.lower())
        words.update(cleaned.split())
    return words


def _fits(pattern: str, value: str) -> bool:
    """Whether ``value`` is ``pattern``, or ends / starts with it when the pattern has a ``*``
    at that end (plain string tests, no regular expression over incident text)."""
    if pattern == "*":
        return bool(value)
    if pattern.startswith("*"):
        return value.endswith(pattern[1:]) and len(value) > len(pattern) - 1
    if pattern.endswith("*"):
        return value.startswith(pattern[:-1]) and len(value) > len(pattern) - 1
    return value == pattern


def _named_in(row: Change, words: set[str]) -> bool:
    return bool({row.package.lower(), *(m.lower() for m in row.modules)} & words)


def _matches(row: Change, use: _Use, words: set[str]) -> bool:
    """Whether ``row`` is about ``use``: the same kind and name, and the module or class the
    message names is the row's; a message that names neither (``__init__() got an
    unexpected keyword argument``) needs the texts to name the package and the class. An
    owner ``*`` (any callee) also needs the texts to name the package; a submodule matches a
    row naming it or a package above it (``numpy.linalg.linalg.x``)."""
    if row.kind != use.kind:
        return False
    if use.kind == "module":
        top = use.module
        return top in row.modules and any(
            use.name == name or use.name.startswith(name + ".") for name in row.names
        )
    if not any(_fits(name, use.name) for name in row.names):
        return False
    if use.module:
        return use.module.split(".")[0] in row.modules and not row.owners
    exact = {owner for owner in row.owners if "*" not in owner}
    patterns = [owner for owner in row.owners if "*" in owner]
    if use.owner:
        if use.owner in exact or any(_fits(p, use.owner) for p in patterns if p != "*"):
            return True
        return "*" in patterns and _named_in(row, words)
    owner_named = not row.owners or bool(patterns) or bool({o.lower() for o in exact} & words)
    return _named_in(row, words) and owner_named


def _installed(message: list[str], lines: list[str], package: str) -> tuple[int, ...]:
    """The version of ``package`` the texts show installed: pip's output first, then a
    version line (``torch: 2.3.0``); a line that dates releases in prose is not one."""
    if shown := installed_versions(lines).get(_pip(package)):
        return shown
    for line in lines:
        if _DATING.search(line):
            continue
        patterns = (_SHOWN_VERSION,) if line in message else (_SHOWN_VERSION, _LOOSE_VERSION)
        for pattern in patterns:
            for match in pattern.finditer(line):
                if _pip(match.group("pkg")) == _pip(package):
                    return _version(match.group("ver"))
    return ()


def _decide(row: Change, use: _Use, installed: tuple[int, ...]) -> DocumentedChange | None:
    shown = _dotted(installed) if installed else ""
    using = f"`{use.name}`" + {"argument": " (an argument)", "module": " (a module)"}.get(
        use.kind, ""
    )
    instead = f"; use {row.replacement} instead" if row.replacement else ""
    if row.removed and (not installed or _padded(installed) >= _padded(row.removed)):
        if row.added and not installed:
            return None  # added and later removed: which side the install is on is unknown
        release = _dotted(row.removed)
        note = f"{row.package} {release} removed {using}{instead}"
        return DocumentedChange(
            row.package,
            use.name,
            "downgrade",
            f"< {release}",
            shown,
            note,
            row.source,
            "from",
            row.removed,
        )
    if row.added and (not installed or _padded(installed) < _padded(row.added)):
        release = _dotted(row.added)
        note = f"{row.package} {release} added {using}"
        return DocumentedChange(
            row.package,
            use.name,
            "upgrade",
            f">= {release}",
            shown,
            note,
            row.source,
            "below",
            row.added,
        )
    return None


def documented_change(message: str, texts: Sequence[str]) -> DocumentedChange | None:
    """The change the release notes give for a name or argument the message says is
    missing or rejected; ``texts`` (logs, frame lines) name the package and its installed
    version. None when no row covers it or the installed version contradicts the row."""
    uses = _uses(message)
    if not uses:
        return None
    lines = _lines([message, *texts])
    words = _words(lines)
    for use in uses:
        for row in load_changes():
            if _matches(row, use, words):
                installed = _installed(_lines([message]), lines, row.package)
                return _decide(row, use, installed)
    return None
