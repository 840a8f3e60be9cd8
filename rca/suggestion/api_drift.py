"""Which installed package an API-drift failure points at, read from the message and the
traceback's frames, when the text names no version.

Three kinds of line say a library's API moved under the code that calls it:

- ``X() got an unexpected keyword argument 'a'`` raised where an installed package's own
  code makes the call (its frame is the innermost one, under ``site-packages/<pkg>/``):
  that package passes an argument the library it calls does not take. Raised from the
  user's own code the callee may as well be the user's own function, so nothing is read.
- ``module 'numpy' has no attribute 'float'``: the module names the package; the innermost
  frame outside it, when it belongs to another installed package, is the code still using
  the name. A module the traceback shows as the user's own file is not a package.
- ``<path>.so: undefined symbol: _ZN...`` for a binary under ``site-packages``: the
  extension was built against another release of a library it links.
- ``cannot import name 'X' from 'P'`` raised in another installed package's frame: that
  package is the caller, which may instead move to the release written for the installed P.
  A binary that sits directly in ``site-packages`` (``flash_attn_2_cuda.cpython-310.so``)
  is a module, not a package: it is named as a package only when a frame shows the package
  that owns it, since pip knows it by another name.

Whether a release *removed* the name is read from the wording of the message or logs
("removed", "deprecated", "no longer") or from the package's release notes kept as data
(:mod:`.api_changes`); without either the direction is unknown and the runbook's step
names both. For an imported name the wording must name it on the same line: an import
fails for one name, and another name's deprecation warning in the logs says nothing of it
(a missing attribute or argument keeps its looser reading, unchanged here). The removal
rules out "upgrade to a release that has it", the one harmful reading of such an import.
What to do is written in the runbooks' steps, which name the values read here as
placeholders and choose by these facts (``fits`` / ``unless``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ingest.linear_regex import compile as linear
from rca.suggestion.api_changes import documented_change

__all__ = ["VALUE_NAMES", "Drift", "drift_facts", "drift_values", "read_drift"]

#: The step placeholders this module gives values for (:mod:`rca.suggestion.step_values`).
VALUE_NAMES = frozenset(
    {"caller-package", "argument", "extension-package", "package", "missing-name"}
)

_UNEXPECTED_KEYWORD = linear(
    r"(?P<callee>[A-Za-z_][\w.]*)\(\) got an unexpected keyword argument ['\"`]?(?P<arg>\w+)"
)
_MODULE_ATTRIBUTE = linear(
    r"module ['\"`](?P<module>[A-Za-z_][\w.]*)['\"`] has no attribute ['\"`](?P<name>\w+)"
)
#: "cannot import name 'X' from 'P'": the importing package is the caller (the name itself,
#: and which way P must move, is read by :mod:`rca.suggestion.version_pairs`).
_IMPORT_NAME = linear(
    r"cannot import name ['\"`](?P<name>\w+)['\"`] from ['\"`](?P<module>[A-Za-z_][\w.]*)",
    ignore_case=True,
)
_UNDEFINED_SYMBOL = linear(
    r"(?P<path>[^\s'\"]+\.(?:so|pyd|dylib)(?:\.[\w.]+)?)['\"]?:? undefined symbol:? \w+"
)
#: Wording that says a release took the name or argument away.
_REMOVED = linear(
    r"\b(?:removed|deprecated|no longer (?:available|supported|exists?|accepted))\b",
    ignore_case=True,
)
_WORD = linear(r"\w+")
_INSTALLED = ("site-packages", "dist-packages")
_MAX_LINES = 400
_MAX_LINE = 2000


@dataclass(frozen=True)
class Drift:
    """What the incident shows of an API that moved; empty strings where it shows nothing."""

    caller_package: str = ""  # installed package whose code makes the failing call or access
    argument: str = ""
    callee: str = ""
    package: str = ""  # the module a name is missing from (top-level package)
    missing_name: str = ""
    imported_name: str = ""  # "cannot import name 'X'": X
    extension_package: str = ""  # empty when only a module file shows, not its package
    extension_module: str = ""  # the binary's package folder or module file under site-packages
    removed: bool = False


def _parts(path: str) -> list[str]:
    return [part for part in path.replace("\\", "/").split("/") if part]


def installed_package(path: str) -> str:
    """The top-level package of a file under ``site-packages`` / ``dist-packages`` (the
    directory, or a module file's name before its first dot); empty elsewhere."""
    parts = _parts(path)
    for i, part in enumerate(parts[:-1]):
        if part in _INSTALLED:
            return parts[i + 1].split(".")[0]
    return ""


def _frame_package(frame: Mapping[str, Any]) -> str:
    return installed_package(str(frame.get("filename") or frame.get("abs_path") or ""))


def _user_module(frames: Sequence[Mapping[str, Any]], module: str) -> bool:
    """Whether a frame outside installed packages is the file or folder named ``module``."""
    for frame in frames:
        if _frame_package(frame):
            continue
        parts = _parts(str(frame.get("filename") or ""))
        stems = [part.split(".")[0] for part in parts]
        if module in stems:
            return True
    return False


def _lines(texts: Sequence[str]) -> list[str]:
    lines: list[str] = []
    for text in texts:
        lines.extend(line[:_MAX_LINE] for line in text.splitlines()[:_MAX_LINES])
    return lines[: _MAX_LINES * 4]


def _top_level_module(path: str) -> bool:
    """Whether a binary sits directly in ``site-packages`` (a module file, not a package's)."""
    parts = _parts(path)
    return any(part in _INSTALLED and i == len(parts) - 2 for i, part in enumerate(parts))


def _owning_package(module: str, frames: Sequence[Mapping[str, Any]]) -> str:
    """The package a top-level extension module belongs to, as the traceback shows it: a
    package whose frames the traceback shows and whose name starts the module's
    (``flash_attn_2_cuda`` is loaded by ``flash_attn``), or whose frame's line imports it
    (``import selective_scan_cuda`` in ``mamba_ssm``). Empty when no frame shows one: the
    module's name is not the name pip knows its package by, so it is no package to name."""
    words = {module}
    for frame in reversed(frames):
        package = _frame_package(frame)
        if not package or package == module:
            continue
        code = str(frame.get("context_line") or "")[:_MAX_LINE]
        imports = code.lstrip().startswith(("import ", "from "))
        if module.startswith(package + "_") or (imports and words & set(_WORD.findall(code))):
            return package
    return ""


def _names_removal(name: str, lines: Sequence[str]) -> bool:
    """Whether one line both names ``name`` (as a whole word) and says it was removed."""
    return any(_REMOVED.search(line) and name in _WORD.findall(line) for line in lines)


def read_drift(message: str, frames: Sequence[Mapping[str, Any]], logs: Sequence[str]) -> Drift:
    """The API drift ``message`` and ``frames`` (outermost first, as Python prints them)
    show; ``logs`` only for wording that says a release removed the name."""
    lines = _lines([message])
    innermost = _frame_package(frames[-1]) if frames else ""
    found: dict[str, Any] = {}
    for line in lines:
        match = None if found.get("argument") else _UNEXPECTED_KEYWORD.search(line)
        if match and innermost:
            callee = match.group("callee").removesuffix("__init__").rstrip(".")
            found.update(caller_package=innermost, argument=match.group("arg"), callee=callee)
        if not found.get("missing_name") and (match := _MODULE_ATTRIBUTE.search(line)):
            package = match.group("module").split(".")[0]
            if not _user_module(frames, package):
                found.update(package=package, missing_name=match.group("name"))
                caller = next(
                    (p for f in reversed(frames) if (p := _frame_package(f)) and p != package),
                    "",
                )
                if caller:
                    found["caller_package"] = caller
        if not found.get("imported_name") and (match := _IMPORT_NAME.search(line)):
            found["imported_name"] = match.group("name")
            package = match.group("module").split(".")[0]
            caller = next(
                (p for f in reversed(frames) if (p := _frame_package(f)) and p != package), ""
            )
            if caller:
                found.setdefault("caller_package", caller)
        match = None if found.get("extension_module") else _UNDEFINED_SYMBOL.search(line)
        if match and (extension := installed_package(match.group("path"))):
            found["extension_module"] = extension
            top_level = _top_level_module(match.group("path"))
            found["extension_package"] = (
                _owning_package(extension, frames) if top_level else extension
            )
    if found.get("imported_name"):
        code = [str(frame.get("context_line") or "") for frame in frames]
        documented = documented_change(message, [*logs, *code])
        found["removed"] = _names_removal(found["imported_name"], _lines([message, *logs])) or (
            documented is not None and documented.direction == "downgrade"
        )
    if found.get("argument") or found.get("missing_name"):
        found["removed"] = any(_REMOVED.search(line) for line in _lines([message, *logs]))
        code = [str(frame.get("context_line") or "") for frame in frames]
        documented = documented_change(message, [*logs, *code])
        if documented is not None and documented.direction == "downgrade":
            found["removed"] = True  # the package's release notes say a release removed it
    return Drift(**found)


def drift_facts(drift: Drift) -> set[str]:
    """The facts of :data:`~rca.corpus.step_metadata.FACTS` this module reads."""
    facts: set[str] = set()
    if drift.argument:
        facts.add("library-call-rejects-argument")
        if drift.removed:
            facts.add("argument-removed-by-release")
    if drift.missing_name:
        facts.add("module-name-missing")
        if drift.caller_package:
            facts.add("name-used-by-other-package")
        if drift.removed:
            facts.add("name-removed-by-release")
    if drift.imported_name and drift.removed:
        facts.add("name-removed-by-release")  # an import: rules out "upgrade to one with it"
    if (drift.argument or drift.missing_name) and not drift.removed:
        facts.add("removal-unstated")  # rules out the steps that assume a removal
    if drift.extension_module:
        facts.add("extension-symbol-missing")
    return facts


def drift_values(drift: Drift) -> dict[str, str]:
    """The placeholder values (:data:`VALUE_NAMES`) the incident gives. An extension module
    whose package no frame shows is named as what it is (its name is not one pip knows),
    so "Reinstall {extension-package}" stays true."""
    extension = drift.extension_package or (
        f"the package that ships `{drift.extension_module}`" if drift.extension_module else ""
    )
    pairs = {
        "caller-package": drift.caller_package,
        "argument": drift.argument,
        "package": drift.package,
        "missing-name": drift.missing_name,
        "extension-package": extension,
    }
    return {name: value for name, value in pairs.items() if value}
