"""An install or upgrade step needs evidence: a version the text names, or a library that
failed to load. ONNX Runtime's "CUDA_PATH is set but CUDA wasn't able to be loaded" is the
GPU package (only its CUDA provider prints it) failing to load CUDA/cuDNN: the
``gpu-libraries-not-loaded`` fact. Swapping the CPU package for the GPU one cannot help
then; installing the CUDA and cuDNN the GPU package was built for can.
"""

from __future__ import annotations

from rca.suggestion.platform_facts import platform_facts
from rca.suggestion.providers.step_ranking import rank_steps
from tests.support.evidence import incident_context

_NOT_LOADED = (
    "onnxruntime_pybind_state.cc:857 onnxruntime::python::CreateExecutionProviderInstance"
    " CUDA_PATH is set but CUDA wasnt able to be loaded. Please install the correct version"
    " of CUDA andcuDNN as mentioned in the GPU requirements page, make sure they're in the"
    " PATH, and that your GPU is supported."
)


def test_cuda_not_loaded_by_the_gpu_package_is_the_fact() -> None:
    assert "gpu-libraries-not-loaded" in platform_facts([_NOT_LOADED])
    assert "gpu-libraries-not-loaded" in platform_facts(
        ["CUDA_PATH is set but CUDA wasn't able to be loaded."]
    )


def test_the_bare_provider_failure_is_not_the_fact() -> None:
    # A CPU package shadowing the GPU one prints this too.
    assert "gpu-libraries-not-loaded" not in platform_facts(
        ["Failed to create CUDAExecutionProvider. Please reference the requirements."]
    )


def test_the_gpu_package_is_not_swapped_when_cuda_did_not_load() -> None:
    ctx = incident_context(_NOT_LOADED, ("onnxruntime-cuda-provider-missing", 0.9))
    chosen = rank_steps(ctx)[0]
    assert "Uninstall" not in chosen.action
    assert "cuDNN" in chosen.action
