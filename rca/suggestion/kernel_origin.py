"""Whether a failed CUDA kernel is a compiled extension's own, not PyTorch's.

"no kernel image is available for execution on the device" (or "invalid device function")
says the binary that launched the kernel holds no code for this GPU's architecture. When
that binary is a third-party extension (custom ops compiled with ``torch.utils.
cpp_extension``, a package's ``_ext`` module), its kernels were built for the architecture
list of *its* build (``TORCH_CUDA_ARCH_LIST`` when it was compiled): a new PyTorch build adds
none of them; rebuilding or reinstalling the extension for the GPU does.

The text says so when the error is reported by the extension's own code:

- its launch check, ``cudaGetLastError()`` after the launch printed as ``CUDA kernel failed :
  <error>``: the idiom of custom CUDA ops (PointNet++-style ops and the many 3D-detection
  and research repositories that copy them), never PyTorch's wording (c10 reports
  ``CUDA error: <error>``);
- an error line that names a CUDA source file (``.cu``, ``.cuh``) outside PyTorch's own
  source tree (``aten/``, ``c10/``, ``torch/csrc``, ``caffe2/``): "Error named symbol not
  found at line 528 in file .../csrc/ops.cu". PyTorch's own device asserts name
  ``../aten/src/ATen/native/cuda/...cu`` and are not such lines.

Linear-time patterns (:mod:`ingest.linear_regex`) over capped lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["CUDA_KERNEL_IN_EXTENSION", "kernel_origin_facts"]

CUDA_KERNEL_IN_EXTENSION = "cuda-kernel-in-extension"

#: An extension's launch check: ``CUDA kernel failed : no kernel image is available ...``.
_LAUNCH_CHECK = linear(r"\bCUDA kernel failed\s*:\s*\S")
#: A CUDA source file an error line names, and the path before it.
_CUDA_SOURCE = linear(r"(?P<path>[\w./\\~+-]*?)\b\w+\.cuh?\b")
_ERROR = linear(r"\berror\b", ignore_case=True)
#: PyTorch's own source tree, as its messages print paths into it.
_TORCH_SOURCE = linear(r"(?:^|[/\\])(?:aten|c10|caffe2)[/\\]|torch[/\\]csrc[/\\]")


def _extension_source(line: str) -> bool:
    """Whether an error line names a CUDA source file outside PyTorch's own sources."""
    if not _ERROR.search(line):
        return False
    match = _CUDA_SOURCE.search(line)
    return match is not None and not _TORCH_SOURCE.search(match.group("path"))


def kernel_origin_facts(texts: Sequence[str]) -> set[str]:
    """:data:`CUDA_KERNEL_IN_EXTENSION` when the message or log lines show a CUDA error
    reported by a compiled extension's own code."""
    for line in first_lines(texts):
        if _LAUNCH_CHECK.search(line) or _extension_source(line):
            return {CUDA_KERNEL_IN_EXTENSION}
    return set()
