"""A CUDA kernel error reported by a compiled extension's own code (issue 16).

"no kernel image is available for execution on the device" from a third-party extension's
kernels is fixed by rebuilding or reinstalling that extension for the GPU's architecture
(``TORCH_CUDA_ARCH_LIST``), not by another PyTorch build: torch's wheels add none of the
extension's kernels. The text says the extension reported it when its own launch check
printed it (``CUDA kernel failed : ...``; PyTorch's c10 says ``CUDA error: ...``) or an error
line names its ``.cu`` source outside PyTorch's tree (``cuda-kernel-in-extension``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.kernel_origin import CUDA_KERNEL_IN_EXTENSION, kernel_origin_facts
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

_ARCH = ("cuda-no-kernel-image-arch", 0.9)
_NO_IMAGE = "no kernel image is available for execution on the device"
_TORCH_BUILD = "Install a PyTorch build whose CUDA version supports the GPU"
_REBUILD = "Rebuild or reinstall extensions for the GPU's architecture"


@pytest.mark.parametrize(
    ("texts", "extension"),
    [
        ([f"CUDA kernel failed : {_NO_IMAGE}"], True),
        (["python -m detector.tools.train", f"CUDA kernel failed : {_NO_IMAGE}"], True),
        (
            ["Error named symbol not found at line 528 in file /home/u/src/somepkg/csrc/ops.cu"],
            True,
        ),
        ([f"error: {_NO_IMAGE} (ops/src/ball_query_gpu.cuh:41)"], True),
        # PyTorch's own wording and its own sources
        ([f"RuntimeError: CUDA error: {_NO_IMAGE}"], False),
        (
            [
                "RuntimeError: CUDA error: device-side assert triggered",
                "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0]"
                " Assertion `-sizes[i] <= index && index < sizes[i]` failed. error",
            ],
            False,
        ),
        (["error in /pytorch/torch/csrc/cuda/Module.cpp and c10/cuda/CUDAFunctions.cu"], False),
        ([f"RuntimeError: Unknown: {_NO_IMAGE}"], False),
        (["torch.cuda.is_available() -> True", "x.cuda() failed"], False),
        ([], False),
    ],
)
def test_the_extension_is_read_from_who_reported_the_error(
    texts: list[str], extension: bool
) -> None:
    assert (CUDA_KERNEL_IN_EXTENSION in kernel_origin_facts(texts)) is extension


def test_an_extension_kernel_is_rebuilt_not_torch_reinstalled() -> None:
    ctx = message_context(f"CUDA kernel failed : {_NO_IMAGE}", _ARCH)
    action = OfflineProvider().suggest(ctx).action
    assert action.startswith(_REBUILD), action
    reinstall = (
        "Install a PyTorch build whose CUDA version supports the GPU (`pip install torch"
        " --index-url https://download.pytorch.org/whl/cu128`)."
    )
    assert not validate(draft(reinstall, _ARCH[0]), ctx).premises_ok


def test_torch_own_error_keeps_the_torch_build_first() -> None:
    ctx = message_context(f"RuntimeError: CUDA error: {_NO_IMAGE}", _ARCH)
    assert CUDA_KERNEL_IN_EXTENSION not in read_premises(ctx).facts
    assert OfflineProvider().suggest(ctx).action.startswith(_TORCH_BUILD)


@settings(max_examples=25, deadline=None)
@given(
    package=st.sampled_from(["pcdet", "mmdet3d", "pointnet2_ops", "my_ops", "spconv"]),
    module=st.sampled_from(["datasets.nuscenes", "tools.train", "models.detector"]),
    cuda=st.sampled_from(["10.2", "11.3", "11.8", "12.1"]),
    error=st.sampled_from([_NO_IMAGE, "invalid device function"]),
    source=st.booleans(),
)
def test_metamorphic_renamed_packages_and_versions_keep_the_choice(
    package: str, module: str, cuda: str, error: str, source: bool
) -> None:
    message = (
        f"Error {error} at line 77 in file /opt/{package}/csrc/{package}_kernel.cu"
        if source
        else f"CUDA kernel failed : {error}"
    )
    logs = (f"python -m {package}.{module} --cfg cfg.yaml", f"docker (cuda {cuda})")
    ctx = message_context(message, _ARCH, logs=logs)
    assert CUDA_KERNEL_IN_EXTENSION in read_premises(ctx).facts
    action = OfflineProvider().suggest(ctx).action
    assert action.startswith(_REBUILD), action


@given(st.lists(st.text(alphabet=st.sampled_from(list("CUDA kernel failed:.cu/aten error ")))))
def test_arbitrary_text_never_raises(texts: list[str]) -> None:
    kernel_origin_facts(texts)


def test_long_text_is_read_in_linear_time() -> None:
    def read(n: int) -> None:
        kernel_origin_facts(["error " + "a/" * (5 * n) + "x.c", "CUDA kernel failed " * n])

    assert_linear(read, 500, 20_000)
