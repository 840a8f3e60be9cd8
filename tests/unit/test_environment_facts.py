"""Facts about an incident's environment and code, and the steps they choose (issue 16 item 2).

Each fact is read from the generic wording of a kind of line (a loader's "built with X,
found Y", pip's output, a ``with torch.no_grad():`` frame, a serving engine's graph-capture
log), checked on dev cases and on phrasings no case was written from.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.frames import make_frame
from ingest.parsing.shapes import extract_shape_diff
from rca.suggestion.context import AnalysisContext
from rca.suggestion.environment_facts import environment_facts, rejected_arguments
from rca.suggestion.incident_facts import fact_words
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import evidence


def _ctx(case: dict[str, Any], *ranked: tuple[str, float]) -> AnalysisContext:
    return AnalysisContext(
        error_type=case["exception_type"],
        message=case["message"],
        shape_diff=extract_shape_diff(case["message"]),
        logs=[{"message": line} for line in case.get("logs") or []],
        evidence=evidence(*ranked),
    )


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.text(max_size=600), max_size=4))
def test_any_text_gives_environment_facts_without_raising(texts: list[str]) -> None:
    environment_facts(texts)
    rejected_arguments("\n".join(texts))


def test_a_library_built_for_another_version_is_read_from_loader_lines() -> None:
    for line in (
        "Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0.",
        "The detected CUDA version (12.1) mismatches the version that was used to compile"
        " PyTorch (11.8). Please make sure to use the same CUDA versions.",
        "cudnn 9.1.0 found at runtime, but this module was built against cuDNN 8.9.2",
    ):
        assert "library-version-mismatch" in environment_facts([line]), line
    # One version, or no word about what was found: no mismatch is claimed.
    assert not environment_facts(["jaxlib was compiled with CUDA 12.2 support."])
    assert not environment_facts(["Built with 2.1.0 and 2.1.0 loaded"])


def test_a_requirement_is_met_only_by_an_installed_version_at_or_above_it() -> None:
    requirement = "Using the `Trainer` with `PyTorch` requires `accelerate>=0.20.1`"
    for installed in (
        "but already have accelerate Version: 0.25.0",
        "Requirement already satisfied: accelerate in ./site-packages (0.21.0)",
        "Successfully installed Accelerate-0.20.1 peft-0.7.1",
        "accelerate                   0.30.0",
    ):
        assert "required-version-installed" in environment_facts([requirement, installed])
    older = "Requirement already satisfied: accelerate in ./site-packages (0.19.0)"
    assert "required-version-installed" not in environment_facts([requirement, older])
    other = "Successfully installed transformers-4.40.0"
    assert "required-version-installed" not in environment_facts([requirement, other])


def test_code_without_autograd_and_graph_capture_are_read_from_frames_and_logs() -> None:
    assert "autograd-off-in-code" in environment_facts(["    with torch.no_grad():"])
    assert "autograd-off-in-code" in environment_facts(["@torch.inference_mode()"])
    assert "autograd-off-in-code" not in environment_facts(["Wrap it in torch.no_grad"])
    for log in (
        "INFO model_runner.py:1024] Capturing cudagraphs for decoding.",
        "Capturing the model for CUDA graphs. This may lead to unexpected consequences",
    ):
        assert "cuda-graphs-captured" in environment_facts([log])


def test_arguments_an_api_rejects_are_named_facts() -> None:
    assert rejected_arguments("ValueError: Argument(s) not recognized: {'lr': 0.002}") == ["lr"]
    message = "TypeError: __init__() got an unexpected keyword argument 'use_auth_token'"
    assert rejected_arguments(message) == ["use_auth_token"]
    assert "use_auth_token" in fact_words(message, [])
    assert rejected_arguments("ValueError: Keyword argument not understood: 'decay'") == ["decay"]


def test_a_cudnn_version_mismatch_is_not_answered_with_memory_settings() -> None:
    case = dev_case("ra006")  # DNN library initialization failed; the log names both versions
    ctx = _ctx(case, ("tf-gpu-memory-growth-cudnn-init", 0.9))
    assert "library-version-mismatch" in read_premises(ctx).facts
    draft = OfflineProvider().suggest(ctx)
    assert "reinstall" in draft.action.lower()
    memory = Draft(
        "Set `XLA_PYTHON_CLIENT_PREALLOCATE=false` before JAX starts.",
        "JAX reserves most of the device.",
        "tf-gpu-memory-growth-cudnn-init",
        0.5,
        "test",
        "test",
    )
    assert not validate(memory, ctx).premises_ok


def test_an_installed_requirement_is_answered_with_a_restart_not_an_upgrade() -> None:
    case = dev_case("ra026")  # requires accelerate>=0.20.1 while 0.25.0 is installed
    ctx = _ctx(case, ("accelerate-transformers-version-pair", 0.9))
    assert "required-version-installed" in read_premises(ctx).facts
    assert "restart" in OfflineProvider().suggest(ctx).action.lower()


def test_the_step_naming_a_rejected_argument_is_chosen() -> None:
    case = dev_case("ra058")  # Keras 3 optimizer rejects lr=
    ctx = _ctx(case, ("keras3-tf-keras-transformers", 0.9))
    assert "learning_rate" in OfflineProvider().suggest(ctx).action


def test_allocator_settings_are_not_suggested_when_the_device_is_held_elsewhere() -> None:
    case = dev_case("ra059")  # PyTorch holds 686 MiB of a 47.5 GiB GPU that is full
    ctx = _ctx(case, ("cuda-oom-fragmentation", 0.9), ("cuda-oom-inference", 0.85))
    assert "PYTORCH_CUDA_ALLOC_CONF" not in OfflineProvider().suggest(ctx).action
    allocator = Draft(
        "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` in the environment before the"
        " process starts.",
        "It removes fragmentation.",
        "cuda-oom-fragmentation",
        0.5,
        "test",
        "test",
    )
    assert not validate(allocator, ctx).premises_ok


def test_no_grad_is_not_suggested_for_code_that_already_runs_without_autograd() -> None:
    message = (
        "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity;"
        " 12.10 GiB already allocated; 1.25 GiB free; 13.30 GiB reserved in total by PyTorch)"
    )
    frame = make_frame("serve.py", "predict", 41, context_line="with torch.no_grad():")
    ctx = AnalysisContext(
        error_type="torch.OutOfMemoryError",
        message=message,
        frames=[frame],
        evidence=evidence(("cuda-oom-inference", 0.9)),
    )
    assert "autograd-off-in-code" in read_premises(ctx).facts
    assert "no_grad" not in OfflineProvider().suggest(ctx).action
