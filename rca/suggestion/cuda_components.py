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

The installed driver is read where a tool prints it (:func:`shown_drivers`): nvidia-smi's
"Driver Version: 535.104.05", torch's collect_env "Nvidia driver version: ...", TensorFlow's
"kernel reported version is: 470.182.3", the kernel module's "Kernel Module  535.104.05" and an
NGC container's "... or later, but version 460.84 was detected". Where only the CUDA release the
driver supports is shown ("found version 11040", nvidia-smi's "CUDA Version: 12.2", XLA's "The
NVIDIA driver's CUDA version is 12.2", "cudaDriverGetVersion returned 11020") that release is
read instead (:func:`driver_cuda`), for a lower bound on the driver (:mod:`.driver_targets`).
When the kernel reports its module out of step with the user-space libraries ("NVRM: API
mismatch: the client has the version X, but this kernel module has the version Y",
:mod:`.driver_mismatch`), the loaded module's Y is the installed driver, never the client's X.

NVIDIA's forward-compatibility package (``cuda-compat-<major>-<minor>``, data-center GPUs)
leaves "the kernel mode components on the system untouched, while the CUDA driver is upgraded":
it installs the user-mode ``libcuda.so`` of a newer driver branch (cuda-compat-12-8 is "built
using the NVIDIA driver libraries version 570") under the toolkit's ``compat`` directory
(CUDA Compatibility, *Forward Compatibility*,
https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html). With it in use
(:func:`forward_compat`), what libcuda reports (its version, the CUDA release it supports, and
so nvidia-smi's "CUDA Version" and the CUDA release a framework finds) is the package's; the
kernel module ("Driver Version", "kernel driver version 470.239.06" in NGC's banner) is the
installed driver.

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
from rca.suggestion.driver_mismatch import driver_mismatch
from rca.suggestion.version_numbers import parse_version

__all__ = [
    "VALUE_NAMES",
    "DriverGap",
    "MissingSoname",
    "component_facts",
    "component_values",
    "decoded",
    "driver_cuda",
    "driver_gap",
    "forward_compat",
    "missing_soname",
    "shown_drivers",
]

#: The step placeholders this module gives values for (:mod:`rca.suggestion.step_values`).
VALUE_NAMES = frozenset(
    {"driver-cuda", "soname", "linked-package", "kernel-module-version", "driver-library-version"}
)

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
#: A driver's own version: three digits, then one or two dotted parts ("535.104.05", "460.84").
_VERSION = r"(?P<v>[1-9]\d{2}(?:\.\d{1,3}){1,2})\b"
#: Lines printing the installed driver's version: nvidia-smi's header and ``-q`` ("Driver
#: Version : ..."), torch's collect_env ("Nvidia driver version: ..."), "NVIDIA-SMI 535.104.05",
#: TensorFlow's cuda_diagnostics ("kernel reported version is: 470.182.3"), the kernel module's
#: banner ("Kernel Module  535.104.05"), NGC's forward-compatibility banner ("with kernel driver
#: version 470.239.06"). A requirement
#: ("minimum driver version: 450.80", "Driver Version: 530.30.02 or newer is required") is
#: no installed version: ``req`` marks it before, :data:`_REQUIRED_AFTER` after.
_DRIVER_SHOWN = (
    linear(
        r"(?P<req>\b(?:min(?:imum)?|required?|requires|need(?:s|ed)?)\s+(?:\w+\s+)?)?"
        r"\bdriver version\s*:\s*" + _VERSION,
        ignore_case=True,
    ),
    linear(r"\bNVIDIA-SMI\s+" + _VERSION),
    linear(r"\bkernel reported version is:?\s*" + _VERSION, ignore_case=True),
    linear(r"\bKernel Module\s+" + _VERSION, ignore_case=True),
    linear(r"\bkernel driver version\s*:?\s*" + _VERSION, ignore_case=True),
)
#: The user-mode driver's own report (TensorFlow's "libcuda reported version is: ..."): the
#: installed driver, unless the forward-compatibility package supplies that libcuda.
_LIBCUDA_SHOWN = linear(r"\blibcuda reported version is:?\s*" + _VERSION, ignore_case=True)
#: NVIDIA's CUDA forward-compatibility package in use: NGC's banner ("CUDA Forward
#: Compatibility mode ENABLED. Using CUDA 12.4 driver version 550.54.14 with kernel driver
#: version 470.239.06"), CUDA's error when its libcuda cannot run on the GPU ("Forward
#: compatibility was attempted on non supported HW"), ``LD_LIBRARY_PATH`` holding a compat
#: directory (``/usr/local/cuda/compat``), or the ``cuda-compat-12-4`` package being or having
#: been installed. Not a bare listing of ``/usr/local/cuda-12.x/compat/libcuda.so.1``
#: (``ldconfig -p``, ``find``: nvidia/cuda images ship that directory unused), any other
#: "forward compatibility" wording (a FutureWarning's), nor NGC's "compatibility mode is
#: UNAVAILABLE", which says the package is not in use.
_FORWARD_COMPAT = linear(
    r"\bCUDA Forward Compatibility mode ENABLED\b"
    r"|\bforward compatibility was attempted\b"
    r"|\bLD_LIBRARY_PATH[\"']?\s*[=:]\s*[\"']?[^\s\"']{0,400}/compat\b"
    r"|\b(?:install(?:ed|ing)?|setting\s+up|unpacking)\b[^\n]{0,200}?\bcuda-compat-\d"
    r"|^\s*ii\s+cuda-compat-\d",
    ignore_case=True,
)
#: Words after a driver version on its line that make it a requirement, not what is installed.
_REQUIRED_AFTER = linear(
    r"\bor\s+(?:later|newer|above|higher)\b|\brequired\b|>=|\bminimum\b", ignore_case=True
)
#: NGC containers: "This container was built for NVIDIA Driver Release 470.57 or later, but
#: version 460.84 was detected" (the sentence breaks over lines: read over a text prefix).
_NGC_DETECTED = linear(
    r"\bDriver Release [\d.]{1,16} or later,? but\s+version (?P<v>[1-9]\d{2}(?:\.\d{1,3}){0,2})"
    r"\s+was detected",
    ignore_case=True,
)
#: The CUDA release the driver supports, printed without the driver's own version.
_DRIVER_CUDA = (
    linear(r"\bNVIDIA driver'?s CUDA version is (?P<cuda>\d{1,2}\.\d)", ignore_case=True),
    linear(r"\bcudaDriverGetVersion(?:\(\))? returned (?P<cuda>\d{4,5})\b"),
    linear(r"\bCUDA driver version\s*:\s*(?P<cuda>\d{4,5}|\d{1,2}\.\d)\b", ignore_case=True),
)
_MAX_PREFIX = 4000
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


def forward_compat(texts: Sequence[str]) -> bool:
    """Whether the texts show NVIDIA's CUDA forward-compatibility package in use (see
    :data:`_FORWARD_COMPAT`): then the CUDA driver library (``libcuda.so``) loaded is the
    package's, built from a newer driver branch than the kernel module installed."""
    return any(_FORWARD_COMPAT.search(line) for line in _lines(texts))


def shown_drivers(texts: Sequence[str]) -> list[str]:
    """Every installed driver version the texts print ("535.104.05"), in order; a line
    stating a required or minimum version is not one, nor the libcuda version the
    forward-compatibility package supplies (:func:`forward_compat`)."""
    found: list[str] = []
    patterns = _DRIVER_SHOWN if forward_compat(texts) else (*_DRIVER_SHOWN, _LIBCUDA_SHOWN)
    for line in _lines(texts):
        for pattern in patterns:
            for match in pattern.finditer(line):
                required = match.groupdict().get("req") or (
                    pattern is _DRIVER_SHOWN[0] and _REQUIRED_AFTER.search(line[match.end() :])
                )
                if not required:
                    found.append(match.group("v"))
    for text in texts[:_MAX_LINES]:
        if detected := _NGC_DETECTED.search(text[:_MAX_PREFIX]):
            found.append(detected.group("v"))
    if (mismatch := driver_mismatch(texts)) is not None and mismatch.module:
        found.append(mismatch.module)  # the loaded module; never the client's libraries
    return found


def driver_cuda(texts: Sequence[str]) -> str:
    """The CUDA release the texts say the installed driver supports ("11.4"), "" if none:
    torch's "found version 11040", nvidia-smi's "CUDA Version", deviceQuery's driver column,
    XLA's "NVIDIA driver's CUDA version", ``cudaDriverGetVersion``'s number."""
    lines = _lines(texts)
    for line in lines:
        if (match := _DRIVER_TOO_OLD.search(line)) and match.group("cuda"):
            return decoded("cuda", match.group("cuda"))
    for line in lines:
        for pattern in (_SMI, _DEVICE_QUERY, *_DRIVER_CUDA):
            if match := pattern.search(line):
                return decoded("cuda", match.group("cuda"))
    return ""


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
    if (mismatch := driver_mismatch(texts)) is not None:
        facts.add("driver-library-mismatch")
        libraries, module = parse_version(mismatch.libraries), parse_version(mismatch.module)
        if libraries and module and libraries < module:
            facts.add("driver-libraries-older")
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
    if (mismatch := driver_mismatch(texts)) is not None:
        if mismatch.module:
            values["kernel-module-version"] = mismatch.module
        if mismatch.libraries:
            values["driver-library-version"] = mismatch.libraries
    return values
