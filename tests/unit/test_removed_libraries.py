"""An answer that only removes a library the failing program needs fails (issue 16: "sudo
apt-get remove libcudnn6" on cuDNN's "Loaded runtime CuDNN library: 6021 ... compiled with
5105", "Uninstall the CUDA 12 toolkit." on a missing libcublasLt.so.11, passed)."""

from __future__ import annotations

import pytest

from rca.suggestion.removed_libraries import removal_violations

_NEWER = {"runtime-newer-than-build"}
_MISSING = {"library-major-missing"}


@pytest.mark.parametrize(
    ("facts", "action"),
    [
        (_NEWER, "sudo apt-get remove libcudnn6"),
        (_NEWER, "Uninstall cuDNN 6."),
        (_MISSING, "Uninstall the CUDA 12 toolkit."),
        (_MISSING, "Run `sudo apt-get purge cuda-toolkit-12-0`."),
        ({"gpu-libraries-not-loaded"}, "pip uninstall -y onnxruntime-gpu"),
    ],
)
def test_removing_only_fails(facts: set[str], action: str) -> None:
    assert removal_violations(action, facts)


@pytest.mark.parametrize(
    ("facts", "action"),
    [
        (_NEWER, "sudo apt-get remove libcudnn6 && sudo apt-get install libcudnn5"),
        (_NEWER, "Don't uninstall cuDNN; install tensorflow-gpu==1.3.0."),
        (_MISSING, "Install the CUDA 11 libraries (pip install nvidia-cublas-cu11)."),
        ({"gpu-libraries-not-loaded"}, "Uninstall onnxruntime and install only onnxruntime-gpu."),
        (
            {"gpu-libraries-not-loaded"},
            "Uninstall every variant (`pip uninstall onnxruntime onnxruntime-gpu`) and install"
            " exactly one.",
        ),
        (set(), "pip uninstall -y tensorboard-plugin-wit"),
    ],
)
def test_replacing_or_no_library_fact_passes(facts: set[str], action: str) -> None:
    assert removal_violations(action, facts) == []
