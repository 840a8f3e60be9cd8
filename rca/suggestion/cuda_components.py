"""Which CUDA component a GPU-stack failure is about: the driver, a library loaded at run
time, or a library major version a binary was linked against, read from the incident's text.

Three layers fail in look-alike words and take different fixes: the **driver** (installed on
the host, it supports CUDA runtimes up to one release: "The NVIDIA driver on your system is
too old (found version 11000)", "CUDA driver version is insufficient for CUDA runtime
version"; the fix is a newer driver or a framework build for an older CUDA, never a library),
a **library** loaded at run time against the one a framework was compiled with ("PyTorch was
compiled against (8, 5, 0) but found runtime version (8, 4, 1)", JAX's "Found cuDNN version
8600, but JAX was built against version 8906"; see :func:`rca.suggestion.version_pairs.
library_build`), and a **soname** a binary package asks for ("libcublasLt.so.11: cannot open
shared object file": the package was built for CUDA 11).

Versions printed as integers are decoded by the encodings NVIDIA documents for them:
``CUDA_VERSION`` is ``1000 * major + 10 * minor`` (11040 is 11.4), ``CUDNN_VERSION`` is
``1000 * major + 100 * minor + patch`` before cuDNN 9 and ``10000 * major + 100 * minor +
patch`` from 9 on (7605 is 7.6.5, 90501 is 9.5.1). Every pattern is the generic wording of a
kind of line; which step fits is written in the runbooks (``fits`` / ``unless``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ingest.linear_regex import compile as linear

__all__ = [
    "VALUE_NAMES",
    "DriverGap",
    "MissingSoname",
    "component_facts",
    "component_values",
    "decoded",
    "driver_gap",
    "missing_soname",
]

#: The step placeholders this module gives values for (:mod:`rca.suggestion.step_values`).
VALUE_NAMES = frozenset({"driver-cuda", "soname", "linked-package"})

#: "The NVIDIA driver on your system is too old (found version 11040)": the number is the
#: CUDA release the driver supports, as ``CUDA_VERSION`` encodes it.
_DRIVER_TOO_OLD = linear(
    r"driver on your system is too old(?:\s*\(found version (?P<cuda>\d+)\))?", ignore_case=True
)
_DRIVER_INSUFFICIENT = linear(
    r"driver version is insufficient for (?:the )?CUDA runtime version|cudaErrorInsufficientDriver"
    r"|CUDA_ERROR_INSUFFICIENT_DRIVER",
    ignore_case=True,
)
#: nvidia-smi's header ("Driver Version: 470.86   CUDA Version: 11.4") and deviceQuery's
#: "CUDA Driver Version / Runtime Version 7.0 / 6.5".
_SMI = linear(r"Driver Version:\s*[\d.]+\s+CUDA Version:\s*(?P<cuda>\d+\.\d+)", ignore_case=True)
_DEVICE_QUERY = linear(
    r"CUDA Driver Version / Runtime Version\s+(?P<cuda>\d+\.\d+)\s*/\s*(?P<runtime>\d+\.\d+)",
    ignore_case=True,
)
#: "libcublasLt.so.11: cannot open shared object file", "Could not load library
#: libcudnn_cnn_infer.so.8", Windows "cudnn_cnn_infer64_8.dll".
_SONAME = (
    linear(
        r"(?P<lib>lib[A-Za-z][\w+-]*?)\.so\.(?P<major>\d+)(?:\.[\d.]*)?['\"]?:?\s*"
        r"(?:cannot open shared object file|No such file)",
        ignore_case=True,
    ),
    linear(
        r"could not load (?:dynamic )?library '?(?P<lib>lib[A-Za-z][\w+-]*?)\.so\.(?P<major>\d+)",
        ignore_case=True,
    ),
    linear(r"(?P<lib>[A-Za-z][A-Za-z_]*?)64_(?P<major>\d+)\.dll", ignore_case=True),
)
#: The binary that asked for it: "Failed to load library libonnxruntime_providers_cuda.so".
_LOADER = linear(
    r"(?:failed to load|trying to load)[^\n]{0,40}?\b(?:lib)?(?P<name>[A-Za-z]+)[\w]*"
    r"\.(?:so|dll|dylib)\b",
    ignore_case=True,
)
_PIN = linear(r"(?:^|[\s'\"])(?P<pkg>[A-Za-z][\w.-]*[A-Za-z0-9])\s*==\s*(?P<ver>\d+(?:\.\d+)*)")
_MAX_LINES = 400
_MAX_LINE = 2000


@dataclass(frozen=True)
class DriverGap:
    """The driver is older than the CUDA runtime in use; ``cuda`` is the newest CUDA release
    it supports ("11.0"), empty when the text does not say."""

    cuda: str = ""


@dataclass(frozen=True)
class MissingSoname:
    """A binary asked for ``lib`` at major version ``major``; ``package`` is the installed
    package (as pinned in the text) whose binary asked, empty when unknown."""

    lib: str
    major: str
    file: str
    package: str = ""
    version: str = ""


def decoded(library: str, number: str) -> str:
    """``number`` as a dotted version when ``library`` prints its version as an integer in
    one of the encodings documented for it (see the module docstring); else unchanged."""
    if not number.isdigit() or len(number) < 4:
        return number
    name = library.lower()
    value = int(number)
    if "cudnn" in name:
        if value >= 10000:  # cuDNN 9 on: 10000 * major + 100 * minor + patch
            return f"{value // 10000}.{value % 10000 // 100}.{value % 100}"
        return f"{value // 1000}.{value % 1000 // 100}.{value % 100}"
    if name in ("cuda", "driver"):
        return f"{value // 1000}.{value % 1000 // 10}"
    return number


def _lines(texts: Sequence[str]) -> list[str]:
    lines: list[str] = []
    for text in texts:
        lines.extend(line[:_MAX_LINE] for line in text.splitlines()[:_MAX_LINES])
    return lines[: _MAX_LINES * 4]


def driver_gap(texts: Sequence[str]) -> DriverGap | None:
    """The driver-too-old reading of the texts, or None when no line says so."""
    lines = _lines(texts)
    gap: DriverGap | None = None
    for line in lines:
        if match := _DRIVER_TOO_OLD.search(line):
            return DriverGap(decoded("cuda", match.group("cuda") or ""))
        if _DRIVER_INSUFFICIENT.search(line):
            gap = DriverGap()
    if gap is not None:
        for line in lines:
            if match := _SMI.search(line) or _DEVICE_QUERY.search(line):
                return DriverGap(match.group("cuda"))
    return gap


def _package_of(loader: str, lines: list[str]) -> tuple[str, str]:
    """The package pinned in the text whose name starts like the binary that asked."""
    stem = loader.lower()
    for line in lines:
        for match in _PIN.finditer(line):
            name = match.group("pkg")
            head = name.lower().replace("_", "-").split("-")[0]
            if len(head) >= 3 and stem.startswith(head):
                return name, match.group("ver")
    return "", ""


def missing_soname(texts: Sequence[str]) -> MissingSoname | None:
    """The first library a binary could not load at a named major version."""
    lines = _lines(texts)
    for line in lines:
        for pattern in _SONAME:
            if match := pattern.search(line):
                lib = match.group("lib")
                loader = _LOADER.search(line)
                package, version = ("", "")
                if loader and loader.group("name").lower() not in lib.lower():
                    package, version = _package_of(loader.group("name"), lines)
                major = match.group("major")
                shown = f"{lib}64_{major}.dll" if pattern is _SONAME[2] else f"{lib}.so.{major}"
                return MissingSoname(lib, major, shown, package, version)
    return None


def component_facts(texts: Sequence[str]) -> set[str]:
    """The facts of :data:`~rca.corpus.step_metadata.FACTS` this module reads."""
    facts: set[str] = set()
    if driver_gap(texts) is not None:
        facts.add("driver-older-than-runtime")
    if missing_soname(texts) is not None:
        facts.add("library-major-missing")
    return facts


def component_values(texts: Sequence[str]) -> dict[str, str]:
    """The placeholder values (:data:`VALUE_NAMES`) the incident gives."""
    values: dict[str, str] = {}
    if (gap := driver_gap(texts)) is not None and gap.cuda:
        values["driver-cuda"] = gap.cuda
    if (soname := missing_soname(texts)) is not None:
        values["soname"] = soname.file
        if soname.package:
            shown = f"{soname.package} {soname.version}".strip()
            values["linked-package"] = shown
    return values
