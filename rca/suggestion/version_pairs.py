"""Which component a version-pairing failure asks to change, in which direction, read from
the incident's text.

A third of real failures are fixed by upgrading, downgrading or pinning one named component,
and the text usually says which: a requirement and the version found ("jaxlib is version
0.3.25, but this version of jax requires version >= 0.4.6", "deepspeed>=0.10.0,<=0.16.9 is
required ... but found deepspeed==0.17.2", pip's "x 1.0 requires y>=2, but you have y 1.5"),
a pair of releases out of step ("jaxlib version 0.4.31 is newer than and incompatible with
jax version 0.4.20"), a library loaded at run time against the one the code was built with
("Loaded runtime CuDNN library: 7.3.1 but source was compiled with: 7.5.0", "expecting
library version 8.2.4 got 8.2.3", "Unsupported model IR version: 10, max supported IR
version: 9"), or a name missing from a package ("cannot import name 'X' from 'peft'").

Each reader is the generic wording of a kind of line, never a package list: which packages
pair with which, and what to do about it, is written in the runbooks' steps, which name
the values read here as placeholders (:mod:`rca.suggestion.step_values`) and choose by the
facts (:data:`rca.corpus.step_metadata.FACTS`) through ``fits`` / ``unless``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ingest.linear_regex import compile as linear
from rca.suggestion.api_changes import documented_change
from rca.suggestion.cause_releases import away_from, moves_towards, named_causes
from rca.suggestion.cuda_components import VALUE_NAMES as COMPONENT_VALUES
from rca.suggestion.cuda_components import component_facts, component_values
from rca.suggestion.environment_facts import installed_versions
from rca.suggestion.library_builds import LibraryBuild, library_build
from rca.suggestion.named_directions import (
    NAMED_CEILINGS,
    NAMED_NEWER,
    named_direction,
    stated_requirement,
)
from rca.suggestion.numpy_api import numpy_api_facts
from rca.suggestion.version_numbers import bounded_lines as _lines
from rca.suggestion.version_numbers import parse_version as _version

__all__ = [
    "VALUE_NAMES",
    "LibraryBuild",
    "VersionChange",
    "library_build",
    "missing_import",
    "version_change",
    "version_facts",
    "version_values",
]

#: The step placeholders this module gives values for (:mod:`rca.suggestion.step_values`).
VALUE_NAMES = (
    frozenset(
        {
            "package",
            "target-version",
            "installed-version",
            "library",
            "running-version",
            "built-version",
            "missing-name",
            "documented-change",
        }
    )
    | COMPONENT_VALUES
)

_PKG = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"
_NUM = r"\d+(?:\.\d+)*"
_SPEC = rf"(?:[<>=!~]=?\s*{_NUM})(?:\s*,\s*[<>=!~]=?\s*{_NUM})*"

#: "jaxlib is version 0.3.25, but this version of jax requires version >= 0.4.6."
_IS_BUT_REQUIRES = linear(
    rf"(?P<pkg>{_PKG}) is version (?P<have>{_NUM}),? but (?:this version of )?(?P<owner>{_PKG})"
    rf" requires (?:version )?(?P<op>[<>=]=?)?\s*(?P<need>{_NUM})",
    ignore_case=True,
)
#: "deepspeed>=0.10.0,<=0.16.9 is required for ..., but found deepspeed==0.17.2."
_REQUIRED_BUT_FOUND = linear(
    rf"(?P<pkg>{_PKG})\s*(?P<spec>{_SPEC}) is required\b[^\n]{{0,200}}?\bbut found "
    rf"(?P<found>{_PKG})\s*=?=?\s*(?P<have>{_NUM})",
    ignore_case=True,
)
#: pip's resolver: "peft 0.7.1 requires torch>=1.13.0, but you have torch 1.12.1 which is
#: incompatible."
_PIP_CONFLICT = linear(
    rf"(?P<owner>{_PKG}) {_NUM}\S* requires (?P<pkg>{_PKG})\s*(?P<spec>{_SPEC})?, but you have "
    rf"(?P<found>{_PKG}) (?P<have>{_NUM})",
    ignore_case=True,
)
#: "jaxlib version 0.4.31 is newer than and incompatible with jax version 0.4.20."
_OUT_OF_STEP = linear(
    rf"(?P<pkg>{_PKG}) (?:version )?(?P<have>{_NUM}) is (?P<cmp>newer|older) than"
    rf" and incompatible with (?:the )?(?P<owner>{_PKG})(?: version)? (?P<need>{_NUM})",
    ignore_case=True,
)
#: "JAX plugin jax_cuda12_plugin version 0.9.2 is installed, but it is not compatible with
#: the installed jaxlib version 0.9.0.1": a companion package out of step with its owner.
_NOT_COMPATIBLE_WITH = linear(
    rf"(?P<pkg>{_PKG}) version (?P<have>{_NUM}) is installed,? but (?:it )?is not compatible"
    rf" with the installed (?P<owner>{_PKG}) version (?P<need>{_NUM})",
    ignore_case=True,
)
#: A requirement stated in an error: "4 bit quantization requires bitsandbytes>=0.39.0",
#: "Please install bitsandbytes>=0.44.0".
_NEEDS = linear(
    rf"\b(?:requires?|required|install|upgrade|needs?)\b[^\n]{{0,40}}?[`'\"]?"
    rf"(?P<pkg>{_PKG})\s*(?P<op>>=|>)\s*(?P<need>{_NUM})",
    ignore_case=True,
)
#: "cannot import name 'X' from 'pkg.module'". Not "module 'pkg' has no attribute 'X'": that
#: is as often a name a newer release removed (``numpy.float``, ``tf.Session``) as one an
#: older release lacks, so it says nothing of the direction.
_IMPORTS = (
    linear(
        r"cannot import name ['\"`](?P<name>\w+)['\"`] from ['\"`](?P<module>[A-Za-z_][\w.]*)",
        ignore_case=True,
    ),
)
#: An import from a package's public surface: its top module or one level below
#: (``transformers``, ``accelerate.utils``); deeper modules are internals another package
#: reached into.
_PUBLIC_DEPTH = 2


@dataclass(frozen=True)
class VersionChange:
    """Change ``package`` (as the text spells it) in ``direction`` to ``target``."""

    package: str
    direction: str  # "upgrade" or "downgrade"
    target: str  # ">= 0.4.6", "<= 0.16.9", "the version jax 0.4.20 supports"
    installed: str = ""


def _bounds(spec: str) -> tuple[str, str, str]:
    """The floor (``>=``/``>``), ceiling (``<=``/``<``) and exact (``==``) of a spec."""
    floor = ceiling = exact = ""
    for part in spec.split(",")[:8]:
        part = part.replace(" ", "")
        number = part.lstrip("<>=!~")
        op = part[: len(part) - len(number)]
        if op in (">=", ">", "~="):
            floor = number
        elif op in ("<=", "<"):
            ceiling = f"{op} {number}"
        elif op == "==":
            exact = number
    return floor, ceiling, exact


def _against(package: str, spec: str, have: str) -> VersionChange | None:
    """The change that brings ``have`` inside ``spec``; None when it already is."""
    floor, ceiling, exact = _bounds(spec)
    installed = _version(have)
    if exact and installed != _version(exact):
        direction = "upgrade" if installed < _version(exact) else "downgrade"
        return VersionChange(package, direction, f"== {exact}", have)
    if floor and installed < _version(floor):
        return VersionChange(package, "upgrade", f">= {floor}", have)
    if ceiling and installed > _version(ceiling.split()[-1]):
        return VersionChange(package, "downgrade", ceiling, have)
    return None


def _from_requirement(line: str) -> tuple[bool, VersionChange | None]:
    """Whether the line states a requirement with the version found, and the change it
    asks for (None when the version found meets it)."""
    if match := _IS_BUT_REQUIRES.search(line):
        below = _version(match.group("have")) < _version(match.group("need"))
        op = match.group("op") or (">=" if below else "==")
        spec = f"{op}{match.group('need')}"
        return True, _against(match.group("pkg"), spec, match.group("have"))
    for pattern in (_REQUIRED_BUT_FOUND, _PIP_CONFLICT):
        match = pattern.search(line)
        if match and match.group("found").lower() == match.group("pkg").lower():
            spec = match.group("spec") or ""
            return True, _against(match.group("pkg"), spec, match.group("have"))
    if match := _NOT_COMPATIBLE_WITH.search(line):
        have, need = match.group("have"), match.group("need")
        if _version(have) != _version(need):
            direction = "downgrade" if _version(have) > _version(need) else "upgrade"
            target = f"the release of {match.group('owner')} {need}"
            return True, VersionChange(match.group("pkg"), direction, target, have)
    if match := _OUT_OF_STEP.search(line):
        newer = match.group("cmp").lower() == "newer"
        counterpart = f"{match.group('owner')} {match.group('need')}"
        change = VersionChange(
            match.group("pkg"),
            "downgrade" if newer else "upgrade",
            f"the version {counterpart} supports",
            match.group("have"),
        )
        return True, change
    return False, None


def _stated(
    message: str, installed: dict[str, tuple[int, ...]], met: set[str]
) -> VersionChange | None:
    """The change a requirement in one of :data:`~.named_directions.STATED`'s wordings asks
    for, against the version it names or the logs show installed; without one, the
    requirement's own direction (a floor: upgrade; a ceiling: downgrade)."""
    if (stated := stated_requirement(message, met)) is None:
        return None
    package, spec, have, age = stated
    if age:
        older = age == "old"
        target = f"a release {'newer' if older else 'older'} than {have or 'the installed one'}"
        return VersionChange(package, "upgrade" if older else "downgrade", target, have)
    shown = installed.get(package.lower().replace("_", "-").replace(".", "-"))
    have = have or (".".join(str(part) for part in shown) if shown else "")
    if have:
        return _against(package, spec, have)
    floor, ceiling, _ = _bounds(spec)
    if floor:
        return VersionChange(package, "upgrade", f">= {floor}")
    return VersionChange(package, "downgrade", ceiling) if ceiling else None


def version_change(
    message: str, texts: Sequence[str], installed: dict[str, tuple[int, ...]]
) -> VersionChange | None:
    """The component the incident asks to change: from a requirement with the version found
    (message or logs), else a requirement the message states against the version the logs
    show installed (or none shown: the error is the requirement not being met). ``installed``
    is :func:`rca.suggestion.environment_facts.installed_versions` of the texts.

    Never a move towards a release the texts name as the cause ("removed in JAX v0.4.34",
    "requires protobuf<4"): such a reading gives way to the move away from that release,
    which is also the change when nothing else names one (:mod:`.cause_releases`)."""
    change = _read_change(message, texts, installed)
    causes = tuple(
        cause
        for cause in named_causes([message, *texts])
        if (shown := installed.get(cause.package)) is None or cause.bad(shown)
    )  # a cause the installed release is already clear of asks for nothing
    if not causes:
        return change
    if change is not None:
        if not moves_towards(f"{change.direction} {change.package} to {change.target}", causes):
            return change
        causes = tuple(c for c in causes if c.package == change.package.lower()) or causes
    sides = {c.side for c in causes if c.package == causes[0].package}
    if len(sides) > 1 and change is None:
        return None  # a supported range with no version shown: which end is crossed is unknown
    return VersionChange(*away_from(causes[0]), installed=change.installed if change else "")


def _read_change(
    message: str, texts: Sequence[str], installed: dict[str, tuple[int, ...]]
) -> VersionChange | None:
    stated: set[str] = set()
    for line in _lines([message, *texts]):
        found, change = _from_requirement(line)
        if change is not None:
            return change
        if found:
            stated.add(line)
    if (named := named_direction(message, NAMED_CEILINGS)) is not None:
        return VersionChange(*named)
    if (requirement := _stated(message, installed, stated)) is not None:
        return requirement
    for line in _lines([message]):
        if line in stated or "already satisfied" in line.lower():
            continue
        for match in _NEEDS.finditer(line):
            package = match.group("pkg")
            if package.lower() == "version":  # "requires version >= 2": no package named
                continue
            have = installed.get(package.lower().replace("_", "-").replace(".", "-"))
            if have is None:
                return VersionChange(package, "upgrade", f">= {match.group('need')}")
            shown = ".".join(str(part) for part in have)
            if change := _against(package, f">={match.group('need')}", shown):
                return change
    if (documented := documented_change(message, texts)) is not None:
        # A name or argument the release notes say a release added or removed.
        return VersionChange(
            documented.package, documented.direction, documented.target, documented.installed
        )
    named = named_direction(message, NAMED_NEWER)
    return VersionChange(*named) if named is not None else None


def missing_import(message: str) -> tuple[str, str, bool] | None:
    """(package, missing name, public) for a name the message says a package lacks;
    ``public``: imported from the package's top or first-level module, not an internal."""
    for line in _lines([message]):
        for pattern in _IMPORTS:
            if match := pattern.search(line):
                parts = match.group("module").split(".")
                name = match.group("name")
                public = (
                    len(parts) <= _PUBLIC_DEPTH
                    and not name.startswith("_")
                    and not any(part.startswith("_") for part in parts)
                )
                return parts[0], name, public
    return None


def version_facts(message: str, texts: Sequence[str]) -> set[str]:
    """The facts of :data:`~rca.corpus.step_metadata.FACTS` this module reads: which way a
    named component must move, how a running library stands to its build, and whether a
    missing name was imported from a package's public surface or from its internals."""
    facts: set[str] = set()
    change = version_change(message, texts, installed_versions(_lines([message, *texts])))
    if change is not None:
        below = change.direction == "upgrade"
        facts.add("version-below-requirement" if below else "version-above-supported")
    if (build := library_build([message, *texts])) is not None:
        facts.add("runtime-older-than-build" if build.running_older else "runtime-newer-than-build")
    if (missing := missing_import(message)) is not None:
        facts.add("public-name-missing" if missing[2] else "internal-name-missing")
    return facts | component_facts([message, *texts]) | numpy_api_facts([message, *texts])


def version_values(message: str, texts: Sequence[str]) -> dict[str, str]:
    """The placeholder values (:data:`VALUE_NAMES`) the incident gives."""
    values: dict[str, str] = {}
    if (missing := missing_import(message)) is not None:
        values["package"], values["missing-name"] = missing[0], missing[1]
    change = version_change(message, texts, installed_versions(_lines([message, *texts])))
    if change is not None:
        values["package"], values["target-version"] = change.package, change.target
        if change.installed:
            values["installed-version"] = change.installed
    if (documented := documented_change(message, texts)) is not None:
        values["documented-change"] = documented.note
    if (build := library_build([message, *texts])) is not None:
        values["library"] = build.library
        values["running-version"], values["built-version"] = build.running, build.built
    return values | component_values([message, *texts])
