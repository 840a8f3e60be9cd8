"""A build the message says must have CUDA, and answers that install the CPU-only build.

"An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed.
Falling back to cpu" and "Torch not compiled with CUDA enabled" say the installed build of a
package lacks CUDA, and "No GPU/TPU found, falling back to CPU" says the run fell back to the
CPU without naming one (then a CPU-only build of any package keeps the failure); "Install
jax[cpu]" or "pip install torch --index-url https://download.pytorch.org/whl/cpu" installs the
CPU-only build again and keeps the failure. The message side is the generic wording of such
a line; the answer side is pip's and conda's own spelling of a CPU-only build after an
install verb, in a part the answer says (not one :func:`.negated_clauses.turned_down`): an
extra named ``cpu``, a ``-cpu`` pip name, a ``+cpu`` local version, a wheel index ending in
``/cpu``, conda's ``cpuonly``. Which names are one package's (``jax`` and ``jaxlib``) is
data, ``rca/knowledge/build-variants.toml``. RE2 patterns (:mod:`ingest.linear_regex`) over
bounded texts.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Sequence
from pathlib import Path

from ingest.linear_regex import compile as linear
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.old_mentions import alternation

__all__ = ["ANY_PACKAGE", "DATA", "cpu_build_harms", "cuda_builds_needed", "package_family"]

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "build-variants.toml"
_PKG = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"
_MAX_TEXT = 4000
_MAX_TEXTS = 40
_MAX_SPAN = 200
_MAX_WORDS = 40
_DEVICE = r"(?:CUDA|GPU|cuda|gpu)"
#: Lines saying the installed build of a package lacks CUDA.
_NEEDS_CUDA = (
    # "a CUDA-enabled jaxlib is not installed", "no GPU-enabled torch is installed".
    linear(
        rf"\b{_DEVICE}[- ](?:enabled|capable|supported) (?:version of |build of )?"
        rf"[`'\"]?(?P<pkg>{_PKG})[`'\"]? (?:is not|isn't|was not|wasn't) installed",
        ignore_case=True,
    ),
    # "Torch not compiled with CUDA enabled", "tensorflow was not built with CUDA support",
    # "jaxlib was built without CUDA".
    linear(
        rf"\b[`'\"]?(?P<pkg>{_PKG})[`'\"]? (?:is |was )?(?:not (?:compiled|built) with|"
        rf"(?:compiled|built) without) {_DEVICE}\b",
        ignore_case=True,
    ),
    # "the installed jaxlib is a CPU-only build", "a CPU-only version of torch is installed".
    linear(
        rf"\b[`'\"]?(?P<pkg>{_PKG})[`'\"]? (?:is|was) (?:a |the )?CPU[- ]only\b"
        rf"|\bCPU[- ]only (?:build|version|wheel|release) of [`'\"]?(?P<pkg2>{_PKG})",
        ignore_case=True,
    ),
)
#: Lines saying the run fell back to the CPU because no GPU could be used, without naming
#: the package: JAX's "No GPU/TPU found, falling back to CPU.", TensorFlow's "Could not find
#: cuda drivers on your machine, GPU will not be used." A CPU-only build of any package
#: keeps that failure (keyed :data:`ANY_PACKAGE`).
_FELL_BACK = linear(
    rf"\bno {_DEVICE}(?:/TPU)?s? (?:(?:was|were|is|are) )?(?:found|detected|available)\b"
    rf"[^\n]{{0,80}}\bfall(?:ing|s)? ?back to (?:the )?CPU\b"
    rf"|\b{_DEVICE} will not be used\b",
    ignore_case=True,
)
#: The key of :func:`cuda_builds_needed` when the message names no package.
ANY_PACKAGE = ""
#: An install verb: what follows it (to the end of its clause) is what the answer installs
#: (``pip``: a bare name after "install" is a package, not a word of prose).
_INSTALL = linear(
    r"\b(?P<pip>(?:re)?install)\b|\bswitch(?:ing)? to\b|\buse\b|\badd\b", ignore_case=True
)
#: Words that ask for a device build, so a bare package name beside them is not its default.
_DEVICE_WORDS = linear(r"\b(?:cuda\w*|gpu|rocm|tpu|cu\d+)\b|\[", ignore_case=True)
#: Where what an install verb installs ends: a removal, a contrast (:mod:`.old_mentions`),
#: the next step ("then") or the clause's end.
_SPAN_END = linear(
    r"\b(?:"
    + alternation("preference", "replacing-verbs", "removal", "negation")
    + r"|then)\b|[;\n]|\.\s",
    ignore_case=True,
)
#: pip's and conda's spellings of a CPU-only build.
_CPU_BUILDS = (
    linear(rf"(?P<pkg>{_PKG})\[(?P<extras>[A-Za-z0-9_, -]{{1,80}})\]"),  # jax[cpu]
    linear(rf"(?P<pkg>{_PKG})\s*==?\s*v?\d[\w.]*\+cpu\b"),  # torch==2.3.0+cpu
    linear(rf"\b(?P<pkg>{_PKG})\b"),  # tensorflow-cpu, or any name beside /cpu, cpuonly
)
_CPU_SOURCE = linear(r"/cpu\b|\bcpuonly\b", ignore_case=True)


def _name(name: str) -> str:
    return name.strip("`'\"").lower().replace("_", "-")


@functools.cache
def _table() -> tuple[dict[str, str], frozenset[str]]:
    """Each name of :data:`DATA` -> the package's first name; the names whose bare install
    is the CPU-only build (``bare = "cpu"``)."""
    with DATA.open("rb") as handle:
        table = tomllib.load(handle)
    families: dict[str, str] = {}
    bare: set[str] = set()
    for row in table.get("package", []):
        names = [_name(str(name)) for name in row.get("names", [])]
        for name in names:
            families.setdefault(name, names[0])
        if row.get("bare") == "cpu":
            bare.update(names)
    return families, frozenset(bare)


def _families() -> dict[str, str]:
    return _table()[0]


def package_family(name: str) -> str:
    """The package (first name in :data:`DATA`) a name is one of, or ""."""
    return _families().get(_name(name), "")


def cuda_builds_needed(texts: Sequence[str]) -> dict[str, str]:
    """Package -> the line's words, for each package the texts say must be a CUDA build."""
    needed: dict[str, str] = {}
    for text in list(texts)[:_MAX_TEXTS]:
        for pattern in _NEEDS_CUDA:
            for match in pattern.finditer((text or "")[:_MAX_TEXT]):
                groups = match.groupdict()
                family = package_family(groups.get("pkg") or groups.get("pkg2") or "")
                if family:
                    needed.setdefault(family, match.group(0)[:120])
        if (fell := _FELL_BACK.search((text or "")[:_MAX_TEXT])) and not needed:
            needed[ANY_PACKAGE] = fell.group(0)[:120]
    return needed


def _installed_spans(part: str) -> list[tuple[str, bool]]:
    """The words after each install verb of ``part``, up to a removal or the clause's end,
    and whether the verb is "install" itself."""
    spans = []
    for match in _INSTALL.finditer(part):
        span = part[match.end() : match.end() + _MAX_SPAN]
        end = _SPAN_END.search(span)
        spans.append((span[: end.start()] if end else span, bool(match.groupdict().get("pip"))))
    return spans


def _bare_builds(span: str) -> list[tuple[str, str]]:
    """(package, name) of each package ``span`` installs by its bare name when that is its
    CPU-only build (JAX: ``pip install -U jax``), with no device build asked for beside it."""
    if _DEVICE_WORDS.search(span):
        return []
    bare = _table()[1]
    words = (_name(word.strip(",:()")) for word in span.split()[:_MAX_WORDS])
    return [(package_family(word), word) for word in words if word in bare]


def _cpu_builds(span: str, install: bool) -> list[tuple[str, str]]:
    """(package, spelling) of each CPU-only build ``span`` names (``install``: after
    "install", where a bare name is the package's default build)."""
    found: list[tuple[str, str]] = _bare_builds(span) if install else []
    for match in _CPU_BUILDS[0].finditer(span):
        extras = {_name(e) for e in match.group("extras").split(",")}
        if "cpu" in extras:
            found.append((package_family(match.group("pkg")), match.group(0)))
    found += [(package_family(m.group("pkg")), m.group(0)) for m in _CPU_BUILDS[1].finditer(span)]
    source = _CPU_SOURCE.search(span)
    for match in _CPU_BUILDS[2].finditer(span):
        name = _name(match.group("pkg"))
        if name.endswith("-cpu") and package_family(name[: -len("-cpu")]):
            found.append((package_family(name[: -len("-cpu")]), match.group(0)))
        elif source is not None and package_family(name):
            where = source.group(0)
            found.append(
                (package_family(name), f"a {where} wheel index" if "/" in where else where)
            )
    return [(family, spelling) for family, spelling in found if family]


def cpu_build_harms(action: str, needed: dict[str, str]) -> list[str]:
    """Why ``action`` installs the CPU-only build of a package the message says must be a
    CUDA build (empty: it does not)."""
    if not needed:
        return []
    reasons: dict[str, str] = {}  # one per package
    text = (action or "")[:_MAX_TEXT]
    for start, end in turned_down(text):  # "don't install jax[cpu]" installs nothing
        text = text[:start] + " " * (end - start) + text[end:]
    for line in text.split(";"):
        for span, install in _installed_spans(line):
            for family, spelling in _cpu_builds(span, install):
                words = needed.get(family) or needed.get(ANY_PACKAGE)
                if words and family not in reasons:
                    reasons[family] = (
                        f"the message says {words!r}: {spelling} installs the CPU-only"
                        f" build of {family}; install its CUDA build"
                    )
    return list(reasons.values())
