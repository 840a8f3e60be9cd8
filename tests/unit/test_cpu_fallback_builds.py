"""A message saying the run fell back to the CPU, naming no package ("No GPU/TPU found, falling
back to CPU"), makes an answer that installs a CPU-only build of any package fail validation:
that build is what keeps the run on the CPU."""

from __future__ import annotations

import pytest

from rca.suggestion.build_variants import ANY_PACKAGE, cpu_build_harms, cuda_builds_needed
from rca.suggestion.providers import Draft
from rca.suggestion.validation import validate
from tests.support.evidence import message_context

JAX = "No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)"
TF = "Could not find cuda drivers on your machine, GPU will not be used."
RUNBOOK = ("jax-jaxlib-cuda-install", 0.9)


def _llm(action: str) -> Draft:
    return Draft(action, "Because.", RUNBOOK[0], 0.8, "openai", "test-llm")


@pytest.mark.parametrize(
    "message", [JAX, TF, "WARNING: no GPUs were detected; falling back to the CPU"]
)
def test_a_fallback_to_the_cpu_needs_a_gpu_build_of_any_package(message):
    assert ANY_PACKAGE in cuda_builds_needed([message])


@pytest.mark.parametrize(
    "action",
    [
        'pip install "jax[cpu]"',  # re-review line 68
        "Reinstall JAX with pip install -U jax[cpu].",
        "pip install tensorflow-cpu",
        "Install torch from the https://download.pytorch.org/whl/cpu index.",
    ],
)
def test_installing_a_cpu_build_after_a_fallback_fails_validation(action):
    check = validate(_llm(action), message_context(JAX, RUNBOOK))
    assert not check.premises_ok, check.complaints


@pytest.mark.parametrize(
    "action",
    [
        'pip install --upgrade "jax[cuda12]"',
        "Do not install jax[cpu]; install jax[cuda12_pip] from the JAX CUDA wheel index.",
        "Set TF_CPP_MIN_LOG_LEVEL=0 and rerun.",
    ],
)
def test_a_gpu_build_or_no_install_passes(action):
    assert cpu_build_harms(action, cuda_builds_needed([JAX])) == []


def test_a_message_without_a_fallback_needs_nothing():
    assert cuda_builds_needed(["Running on CPU as requested by JAX_PLATFORMS=cpu"]) == {}
