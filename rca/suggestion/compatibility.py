"""The documented pairing of two components a version failure names, from vendors' tables.

:mod:`.version_pairs` and :mod:`.cuda_components` read from the incident *which* component is
out of step and which way ("libcublasLt.so.11: cannot open shared object file" with
``onnxruntime-gpu==1.17.0``; "Loaded runtime CuDNN library: 6021 but source was compiled
with 5105"). What release pairs with what is not in the incident: it is in the vendors'
compatibility tables (ONNX Runtime's CUDA requirements, TensorFlow's tested build
configurations, ONNX's IR versions, PyTorch's domain-library pairs, NVIDIA's driver
minimums). Those tables are data, one TOML file each under ``rca/knowledge/compatibility``
(each citing its page and date; see its README); this module only looks them up and words
the answer as an action with its direction, the ``documented-pairing`` step placeholder
(:mod:`.step_values`). A version no table row covers gives nothing, and the step keeps its
generic wording.

Lookups, tried in this order, each the generic form of a kind of incident:

- a binary asks for a library major the machine lacks, and the table says which release of
  the installed package is built for the other major (upgrade, else downgrade), or, for a
  table of one tested configuration per release (``missing_library = "install"``), what the
  installed release's own row needs;
- a library runs at one version against a build for another, and a table pairs releases of
  a package the incident uses with the running version;
- two installed packages the table pairs are not a pair (``torch`` / ``torchvision``); a
  table of minimums (``minimum = true``: the driver a CUDA release needs) pairs only a
  version below its row, never one above it;
- the driver is too old for the CUDA a build names (``+cu121``).

Every version string is read by plain string operations over a capped prefix (no regex
backtracking, no exceptions on garbage); the incident's texts are read by
:mod:`ingest.linear_regex` patterns only.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.linear_regex import compile as linear
from rca.suggestion.cuda_components import driver_gap, missing_soname
from rca.suggestion.environment_facts import installed_versions
from rca.suggestion.version_numbers import bounded_lines as _lines
from rca.suggestion.version_numbers import padded as _padded
from rca.suggestion.version_numbers import parse_version
from rca.suggestion.version_pairs import library_build

__all__ = [
    "VALUE_NAMES",
    "Row",
    "Table",
    "documented_pairing",
    "load_tables",
    "parse_release",
    "parse_version",
    "release_matches",
]

VALUE_NAMES = frozenset({"documented-pairing"})
TABLES_DIR = Path(__file__).resolve().parent.parent / "knowledge" / "compatibility"
_MAX_VERSION = 64
#: How a column's component is named in an action.
_SHOWN = {"cuda": "CUDA", "cudnn": "cuDNN", "ir": "IR version", "driver": "driver"}
_PIN = linear(
    r"(?:^|[\s'\"(])(?P<pkg>[A-Za-z][\w.-]{0,60}[A-Za-z0-9])\s*==\s*(?P<ver>\d+(?:\.\d+){0,5})"
)
#: A wheel's CUDA tag: ``torch==2.1.0+cu121``, ``torch 2.1.0+cu118``.
_CU_TAG = linear(r"\+cu(?P<tag>\d{2,3})\b")


def parse_release(spec: str) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """(lowest, highest) of a row's ``releases``: "1.15-1.17", "1.19-" (no highest),
    "1.18.1" (both). Garbage gives ((), ()) which matches nothing."""
    spec = spec.strip()[:_MAX_VERSION]
    low, dash, high = spec.partition("-")
    lowest = parse_version(low)
    if not dash:
        return lowest, lowest
    return lowest, (parse_version(high) if high.strip() else None)


def release_matches(spec: str, version: tuple[int, ...]) -> bool:
    """Whether ``version`` is one of the releases ``spec`` names (bounds by prefix: "1.17"
    holds 1.17.3)."""
    lowest, highest = parse_release(spec)
    if not lowest or not version:
        return False
    if _padded(version) < _padded(lowest):
        return False
    return highest is None or version[: len(highest)] <= highest


def _cell_matches(cell: str, version: tuple[int, ...]) -> bool:
    """A table cell ("7", "12.x", "7.4") holds ``version`` when its numbers are its prefix."""
    numbers = parse_version(cell)
    return bool(numbers) and version[: len(numbers)] == numbers


@dataclass(frozen=True)
class Row:
    releases: str
    values: dict[str, str]
    name: str
    default: bool

    @property
    def lowest(self) -> tuple[int, ...]:
        return parse_release(self.releases)[0]


@dataclass(frozen=True)
class Table:
    title: str
    source: str
    relation: str
    subject: str
    aliases: frozenset[str]
    frameworks: frozenset[str]
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    #: What a missing library major gives: "move" the package to a release built for the
    #: other major, or "install" what the installed release's own row names (a table of one
    #: tested configuration per release, where the other major is only a guess about the host).
    missing_library: str = "move"
    #: The columns are minimums ("minimum = true"): a newer value than a row's is supported
    #: too (NVIDIA's drivers run every older CUDA), so only a value below it is out of step.
    minimum: bool = False

    def row_for(self, version: tuple[int, ...], default_only: bool = True) -> Row | None:
        """The first row (file order: the page's) listing ``version``."""
        for row in self.rows:
            if (row.default or not default_only) and release_matches(row.releases, version):
                return row
        return None


def _name(text: str) -> str:
    """pip's normalised project name."""
    return text.strip().lower().replace("_", "-").replace(".", "-")


def _table(data: dict[str, Any]) -> Table | None:
    columns = tuple(str(c) for c in data.get("columns", []) if isinstance(c, str))
    subject = str(data.get("subject", ""))
    if not columns or not subject or not isinstance(data.get("rows"), list):
        return None
    rows = []
    for raw in data["rows"]:
        if not isinstance(raw, dict) or not isinstance(raw.get("releases"), str):
            continue
        values = {c: str(raw[c]) for c in columns if isinstance(raw.get(c), str)}
        name = str(raw.get("name") or subject)
        rows.append(Row(raw["releases"], values, name, raw.get("build", "default") == "default"))
    aliases = frozenset(_name(a) for a in data.get("aliases", []) if isinstance(a, str))
    frameworks = frozenset(str(f) for f in data.get("frameworks", []) if isinstance(f, str))
    return Table(
        str(data.get("title", "")),
        str(data.get("source", "")),
        str(data.get("relation") or "paired with"),
        subject,
        aliases | {_name(subject)},
        frameworks,
        columns,
        tuple(rows),
        "install" if data.get("missing_library") == "install" else "move",
        data.get("minimum") is True,
    )


@functools.cache
def load_tables(directory: Path = TABLES_DIR) -> tuple[Table, ...]:
    """Every table under ``directory`` (a file that does not parse is skipped)."""
    tables = []
    for path in sorted(directory.glob("*.toml")):
        try:
            table = _table(tomllib.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if table is not None:
            tables.append(table)
    return tuple(tables)


def _shown(row: Row, skip: str = "") -> str:
    """A row's pairs in words: "CUDA 12.x and cuDNN 9.x"."""
    pairs = [f"{_SHOWN.get(c, c)} {v}" for c, v in row.values.items() if c != skip]
    return " and ".join(pairs)


def _component(library: str) -> str:
    """The table column a loaded library's name stands for."""
    name = library.lower().removeprefix("lib")
    if "cudnn" in name:
        return "cudnn"
    if name.startswith(("cu", "nvrtc", "nvjitlink", "nvblas")):
        return "cuda"
    return "ir" if name == "ir" else name


def _installed(lines: list[str]) -> dict[str, tuple[int, ...]]:
    """Versions the texts show installed or pinned, by pip's normalised name."""
    found = {name: version for name, version in installed_versions(lines).items() if version}
    for line in lines:
        for match in _PIN.finditer(line):
            found.setdefault(_name(match.group("pkg")), parse_version(match.group("ver")))
    return found


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def _release(row: Row, newest: bool = False) -> str:
    """A row's releases as an install target: its lowest release, or with ``newest`` the
    row's own spelling ("1.18", "1.19 or newer")."""
    lowest, highest = parse_release(row.releases)
    if highest is None:
        return f"{_dotted(lowest)} or newer"
    return _dotted(highest) if newest else _dotted(lowest)


def _soname_pairing(lines: list[str], installed: dict[str, tuple[int, ...]]) -> str:
    soname = missing_soname(lines)
    if soname is None or not soname.major.isdigit():
        return ""
    component, missing = _component(soname.lib), int(soname.major[:6])
    for table in load_tables():
        if component not in table.columns:
            continue
        named = _name(soname.package) if soname.package else ""
        version = parse_version(soname.version) if named in table.aliases else ()
        if not version:
            version = next((installed[a] for a in sorted(table.aliases) if a in installed), ())
        current = table.row_for(version)
        if current is None or parse_version(current.values.get(component, ""))[:1] != (missing,):
            continue
        if table.missing_library == "install":
            needed = f"{current.name} {_dotted(version)} is {table.relation}"
            return f"install {_shown(current)}, what {needed}"
        other = [r for r in table.rows if r.default and r is not current]
        other = [r for r in other if parse_version(r.values.get(component, ""))[:1] != (missing,)]
        newer = [r for r in other if _padded(r.lowest) > _padded(current.lowest)]
        older = [r for r in other if _padded(r.lowest) < _padded(current.lowest)]
        if newer:
            target = min(newer, key=lambda r: _padded(r.lowest))
            action = f"upgrade {target.name} to {_release(target)}"
        elif older:
            target = max(older, key=lambda r: _padded(r.lowest))
            action = f"downgrade {target.name} to {_release(target, newest=True)}"
        else:
            continue
        return f"{action}, built for {_shown(target)}"
    return ""


def _closest(rows: Sequence[Row], component: str, version: tuple[int, ...]) -> list[Row]:
    """The rows whose ``component`` cell holds ``version`` most specifically ("7.6" before
    "7" for 7.6.5)."""
    held = [(len(parse_version(r.values.get(component, ""))), r) for r in rows]
    held = [(n, r) for n, r in held if _cell_matches(r.values.get(component, ""), version)]
    best = max((n for n, _ in held), default=0)
    return [r for n, r in held if n == best]


def _build_pairing(lines: list[str], frameworks: frozenset[str]) -> str:
    build = library_build(lines)
    if build is None:
        return ""
    component = _component(build.library)
    running, built = parse_version(build.running), parse_version(build.built)
    for table in load_tables():
        if component not in table.columns or not (table.frameworks & frameworks):
            continue
        matched = _closest(table.rows, component, running)
        before = _closest(table.rows, component, built)
        if not matched or set(map(id, matched)) & set(map(id, before)):
            continue  # no row for it, or one row holds both: the table cannot tell them apart
        low = min(matched, key=lambda r: _padded(r.lowest))
        high = max(matched, key=lambda r: _padded(r.lowest))
        if before and _padded(low.lowest) > max(_padded(r.lowest) for r in before):
            first, last, verb = low, high, "upgrade"
        elif before:
            first, last, verb = high, low, "downgrade"
        else:
            first, last, verb = high, low, "install"
        span = _release(first, newest=verb != "upgrade")
        other = _release(last, newest=verb == "upgrade")
        shown = other if last.name == first.name else f"{last.name} {other}"
        extra = f" or {shown}" if other != span or last.name != first.name else ""
        target = f"{first.name} {span}" if verb == "install" else f"{first.name} to {span}"
        return f"{verb} {target}{extra}, {table.relation} {_shown(first)}"
    return ""


def _pair_pairing(installed: dict[str, tuple[int, ...]]) -> str:
    for table in load_tables():
        anchor = next((a for a in sorted(table.aliases) if a in installed), "")
        row = table.row_for(installed[anchor]) if anchor else None
        if row is None:
            continue
        for column in table.columns:
            have, cell = installed.get(_name(column)), row.values.get(column, "")
            if not have or not parse_version(cell) or _cell_matches(cell, have):
                continue
            if table.minimum and have >= parse_version(cell):
                continue  # at or above a minimum: supported, never a reason to move down
            verb = "upgrade" if have < parse_version(cell) else "downgrade"
            return (
                f"{verb} {column} to {cell}.x, the release paired with {row.name} "
                f"{_dotted(installed[anchor])}; installed {_dotted(have)}"
            )
    return ""


def _driver_pairing(lines: list[str]) -> str:
    if driver_gap(lines) is None:
        return ""
    tag = next((m.group("tag") for line in lines if (m := _CU_TAG.search(line))), "")
    if not tag:
        return ""
    cuda = (int(tag[:-1]), int(tag[-1]))
    for table in load_tables():
        if "driver" in table.columns and (row := table.row_for(cuda)) is not None:
            driver = row.values.get("driver", "")
            return f"driver {driver} or newer, the minimum for the build's CUDA {_dotted(cuda)}"
    return ""


def documented_pairing(texts: Sequence[str], frameworks: frozenset[str] | set[str]) -> str:
    """The action a compatibility table gives for the incident (message, logs, frame lines),
    or "" when no table covers the versions it names. Short and without parentheses: it is
    shown as an aside inside a step's action, which has a length limit."""
    lines = _lines(texts)
    installed = _installed(lines)
    return (
        _soname_pairing(lines, installed)
        or _build_pairing(lines, frozenset(frameworks))
        or _pair_pairing(installed)
        or _driver_pairing(lines)
    )
