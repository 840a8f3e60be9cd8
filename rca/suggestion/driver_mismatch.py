"""The NVIDIA kernel module and user-space driver libraries out of step: which versions the
incident shows loaded and installed.

The driver has two halves: the kernel module (``nvidia.ko``, with ``nvidia_uvm``,
``nvidia_drm``, ``nvidia_modeset``) and the user-space libraries (``libcuda.so``,
``libnvidia-ml.so``). A package upgrade replaces the libraries on disk while the old module
stays loaded until it is unloaded or the machine reboots; every NVML or CUDA call is then
refused. The kernel says so in its log ("NVRM: API mismatch: the client has the version
535.129.03, but this kernel module has the version 525.147.05.  Please make sure that this
kernel module and all NVIDIA driver components have the same version.", printed over several
``NVRM:`` lines by dmesg, NVIDIA/nvidia-docker#182), older X drivers in the other order ("API
mismatch: the NVIDIA kernel module has version X, but this NVIDIA driver component has
version Y"), nvidia-smi as "Failed to initialize NVML: Driver/library version mismatch" with
"NVML library version: 535.129" (its own library), nvidia-container-cli as "nvml error:
driver/library version mismatch" and pynvml as ``NVMLError_LibRmVersionMismatch`` ("RM has
detected an NVML/RM version mismatch").

The *client* is a user-space component (the libraries just installed); the *kernel module*
is the driver loaded and running, so it is the installed driver a step is held to
(:func:`rca.suggestion.cuda_components.shown_drivers`); the client's version never is.
Every pattern is linear (:mod:`ingest.linear_regex`) over a capped text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

from ingest.linear_regex import compile as linear

__all__ = ["DriverMismatch", "driver_mismatch"]

#: A driver release as the kernel and NVML print it: "535.129.03", "570.144", "535.129".
_V = r"[1-9]\d{2}(?:\.\d{1,3}){1,2}"
#: What follows a whole version in the kernel's sentence: a line cut inside a number
#: ("... the version 535.1") gives none.
_END = r"[,.;\s]"
#: Where a kernel mismatch report starts.
_API = linear(r"\bAPI mismatch:", ignore_case=True)
#: A line break inside one kernel message: dmesg repeats "NVRM:" after its timestamp or
#: indentation, syslog escapes the newline as "#012" ("... but#012NVRM: this kernel module").
_CONTINUATION = linear(r"(?:#012|\r?\n)[^\n]{0,80}?NVRM:")
_SPACES = linear(r"\s+")
_CLIENT = r"(?P<client>" + _V + r")" + _END
_MODULE = r"(?P<module>" + _V + r")" + _END
#: NVRM's wording (the client may be named: "the client 'kwin_wayland' (pid 1005) has").
_NVRM = linear(
    r"^API mismatch:\s*the client(?:\s+'[^'\n]{0,80}'(?:\s*\(pid\s*\d{1,10}\))?)?\s+has the"
    r" version\s+"
    + _CLIENT
    + r"(?:\s*,?\s*but\s+this kernel module has\s+the version\s+"
    + _MODULE
    + r")?",
    ignore_case=True,
)
#: The X driver's older wording, module first.
_COMPONENT = linear(
    r"^API mismatch:\s*the NVIDIA kernel module has version\s+"
    + _MODULE
    + r"(?:\s*,?\s*but\s+this NVIDIA driver component has version\s+"
    + _CLIENT
    + r")?",
    ignore_case=True,
)
#: A mismatch reported without versions (nvidia-smi, nvidia-container-cli, pynvml, a kernel
#: report cut before its numbers).
_REPORTED = linear(
    r"\bNVRM:\s*API mismatch:"
    r"|\bAPI mismatch:\s*the client (?:has the version|'[^'\n]{0,80}'\s*\(pid)"
    r"|\bAPI mismatch:\s*the NVIDIA kernel module has version|\bDriver/library version mismatch\b"
    r"|\bNVML/RM version mismatch\b|\bNVMLError_LibRmVersionMismatch\b"
    r"|\bNVML_ERROR_LIB_RM_VERSION_MISMATCH\b",
    ignore_case=True,
)
#: nvidia-smi's second line under the mismatch: the version of its own NVML library.
_NVML_LIBRARY = linear(r"\bNVML library version:\s*(?P<client>" + _V + r")\b", ignore_case=True)
_MAX_TEXTS = 400
_MAX_TEXT = 20_000
_MAX_TOTAL = 200_000
_WINDOW = 600
_MAX_REPORTS = 8


@dataclass(frozen=True)
class DriverMismatch:
    """The loaded kernel module and the user-space libraries differ; ``module`` is the loaded
    module's version, ``libraries`` the libraries' (the client's), each "" when not shown."""

    module: str = ""
    libraries: str = ""


def _joined(texts: Sequence[str]) -> str:
    """The texts as one, capped: a kernel message may reach over several log lines."""
    return "\n".join(text[:_MAX_TEXT] for text in texts[:_MAX_TEXTS])[:_MAX_TOTAL]


def _kernel_report(text: str) -> DriverMismatch | None:
    """The first kernel "API mismatch" report in ``text`` that names a version."""
    for start in islice((m.start() for m in _API.finditer(text)), _MAX_REPORTS):
        window = _CONTINUATION.sub(" ", text[start : start + _WINDOW])
        window = _SPACES.sub(" ", window)
        if match := _NVRM.search(window) or _COMPONENT.search(window):
            return DriverMismatch(match.group("module") or "", match.group("client") or "")
    return None


def driver_mismatch(texts: Sequence[str]) -> DriverMismatch | None:
    """What the texts (message, log lines) show of a kernel module / library mismatch, or
    None when they show none. Versions are read from the kernel's report, else nvidia-smi's
    "NVML library version" below its mismatch line."""
    text = _joined(texts)
    if (report := _kernel_report(text)) is not None:
        return report
    if _REPORTED.search(text) is None:
        return None
    library = _NVML_LIBRARY.search(text)
    return DriverMismatch(libraries=library.group("client") if library else "")
