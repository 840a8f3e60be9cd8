"""No step sets what the incident already shows set; no unfilled remediation passes (issue 16).

Each harm class from a synthetic incident run through the real offline provider and the
validator: an option already in the logged session options, a flag already on the launch
command, a script the traceback shows failing, a config line, an option in the failing
code. Which options a step sets is read from its own words (no runbook metadata needed);
what the incident shows set from its message, logs, frames and inference context. The two
parsers read untrusted text, so Hypothesis checks them on any input, and on adversarial
input for linear time.
"""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.frames import make_frame
from rca.corpus.files import parse_runbook
from rca.suggestion.context import AnalysisContext, evidence_from_runbook
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.providers.step_ranking import audit_candidates
from rca.suggestion.shown_options import read_shown_options
from rca.suggestion.step_options import option_key, options_set_by
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context

NO_GPU = (
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an"
    " NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
)
DOCKER = (
    "$ docker run --gpus all --rm -it pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime python app.py"
)
ORT_OOM = (
    "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 :"
    " RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'conv1'"
    " Status Message: Failed to allocate memory for requested buffer of size 1073741824"
)
ORT_OPTIONS = (
    "2024-05-02 10:11:12 INFO session providers: [('CUDAExecutionProvider', {'device_id': 0,"
    " 'gpu_mem_limit': 2147483648, 'arena_extend_strategy': 'kSameAsRequested'})]"
)


def _ctx(message: str, slug: str, **extra: object) -> AnalysisContext:
    ctx = message_context(message, (slug, 0.9), logs=tuple(extra.pop("logs", ())))  # type: ignore[arg-type]
    for key, value in extra.items():
        setattr(ctx, key, value)
    return ctx


def test_gpu_access_is_not_suggested_to_a_container_started_with_gpus_all() -> None:
    plain = _ctx(NO_GPU, "cuda-not-available-cpu-build")
    started = _ctx(NO_GPU, "cuda-not-available-cpu-build", logs=(DOCKER,))
    assert read_premises(started).options_set.get("gpus") == "all"
    again = draft(
        "Start the container with GPU access (`docker run --gpus all`).",
        "cuda-not-available-cpu-build",
    )
    assert validate(again, plain).premises_ok
    check = validate(again, started)
    assert not check.premises_ok and "gpus=all is already set" in " ".join(check.complaints)
    assert "--gpus" not in OfflineProvider().suggest(started).action
    # Unfiltered candidates report the contradicted step too.
    assert audit_candidates(started).premise_contradicted >= 1


def test_an_onnx_runtime_arena_option_in_the_logged_session_options_is_not_set_again() -> None:
    slug = "onnxruntime-gpu-memory-arena"
    plain = _ctx(ORT_OOM, slug)
    logged = _ctx(ORT_OOM, slug, logs=(ORT_OPTIONS,))
    shown = read_premises(logged).options_set
    assert shown.get("gpu_mem_limit") == "2147483648"
    assert shown.get("arena_extend_strategy") == "kSameAsRequested"
    assert "gpu_mem_limit" in OfflineProvider().suggest(plain).action
    chosen = OfflineProvider().suggest(logged)
    assert "gpu_mem_limit" not in chosen.action and "Cap" not in chosen.action
    assert validate(chosen, logged).ok
    cap = draft(
        "Cap and tighten the arena with CUDA provider options:"
        ' `{"gpu_mem_limit": 4 * 1024**3, "arena_extend_strategy": "kSameAsRequested"}`.',
        slug,
    )
    assert not validate(cap, logged).premises_ok
    assert validate(cap, plain).premises_ok


def test_an_option_passed_in_the_failing_code_is_not_passed_again() -> None:
    message = (
        "RuntimeError: Expected to have finished reduction in the prior iteration before"
        " starting a new one. This error indicates that your module has parameters that were"
        " not used in producing loss."
    )
    frame = make_frame(
        "/srv/app/train.py",
        "main",
        40,
        context_line="model = DDP(model, device_ids=[rank], find_unused_parameters=True)",
    )
    ctx = _ctx(message, "ddp-unused-parameters", frames=[frame])
    assert read_premises(ctx).options_set.get("find_unused_parameters") == "True"
    action = OfflineProvider().suggest(ctx).action
    assert "find_unused_parameters=True" not in action
    again = draft(
        "Pass find_unused_parameters=True to DistributedDataParallel.", "ddp-unused-parameters"
    )
    assert not validate(again, ctx).premises_ok
    off = draft(
        "Set `find_unused_parameters=False` and freeze the unused head.", "ddp-unused-parameters"
    )
    assert validate(off, ctx).premises_ok


def test_a_flag_on_the_launch_command_in_the_inference_context_is_already_set() -> None:
    message = (
        "ValueError: No available memory for the cache blocks. Try increasing"
        " `gpu_memory_utilization` when initializing the engine."
    )
    ctx = _ctx(
        message,
        "vllm-no-memory-cache-blocks",
        inference_context={"command": "vllm serve org/model --enforce-eager --max-model-len 4096"},
    )
    assert "enforce_eager" in read_premises(ctx).options_set
    assert "enforce" not in OfflineProvider().suggest(ctx).action.lower()
    eager = draft(
        "Run the engine without CUDA graphs (`--enforce-eager`).", "vllm-no-memory-cache-blocks"
    )
    assert not validate(eager, ctx).premises_ok


SCRIPT_RUNBOOK = """---
title: Converted checkpoint missing
failure_class: model_file_not_found
signals: [conversion]
sources: [https://example.org/docs/convert]
---
## Remediation

1. **Run `python convert_checkpoint.py` to write the converted weights first.** Reason: the
   loader reads the converted files only.
2. **Point the loader at the folder the conversion wrote (`--output_dir`).** Reason: a
   default path elsewhere holds nothing.
"""


def test_running_the_script_the_traceback_shows_failing_is_not_the_fix() -> None:
    runbook = parse_runbook(SCRIPT_RUNBOOK, "convert.md")
    message = "FileNotFoundError: [Errno 2] No such file or directory: 'ckpt/params.json'"
    frames = [
        make_frame("/work/repo/convert_checkpoint.py", "<module>", 12, in_app=True),
        make_frame("/work/repo/convert_checkpoint.py", "load", 80, in_app=True),
    ]
    plain = AnalysisContext(
        error_type="FileNotFoundError",
        message=message,
        evidence=[evidence_from_runbook(runbook, 0.9)],
    )
    failing = AnalysisContext(
        error_type="FileNotFoundError",
        message=message,
        frames=frames,
        evidence=[evidence_from_runbook(runbook, 0.9)],
    )
    assert read_premises(failing).scripts == {"convert_checkpoint.py"}
    assert "convert_checkpoint.py" not in OfflineProvider().suggest(failing).action
    rerun = draft("Run `python convert_checkpoint.py` again.", runbook.slug)
    assert validate(rerun, plain).premises_ok
    check = validate(rerun, failing)
    assert not check.premises_ok and "convert_checkpoint.py" in " ".join(check.complaints)


def test_a_config_line_or_env_assignment_shows_an_option_set() -> None:
    shown = read_shown_options(
        "RuntimeError: deterministic algorithms",
        logs=[
            "  use_orig_params: true",
            "CUBLAS_WORKSPACE_CONFIG=:4096:8 python train.py",
            '{"fsdp_use_orig_params": true}',
        ],
    ).options
    assert shown["use_orig_params"][1] == "true"
    assert shown["cublas_workspace_config"][1] == ":4096:8"
    assert shown["fsdp_use_orig_params"][1] == "true"


def test_advice_in_a_message_or_log_shows_nothing_set() -> None:
    shown = read_shown_options(
        "torch.OutOfMemoryError: CUDA out of memory. If reserved but unallocated memory is large"
        " try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
        logs=[
            "INFO model_runner.py:1413] To run the model in eager mode, set 'enforce_eager=True'"
            " or use '--enforce-eager' in the CLI.",
            "You can pass --trust-remote-code to load this model",
        ],
    ).options
    assert not {"pytorch_cuda_alloc_conf", "enforce_eager", "trust_remote_code"} & set(shown)


def test_an_imperative_run_with_shows_nothing_set() -> None:
    # PyTorch's NCCL error says how to get details; the variable is not set
    nccl = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for"
        " details), NCCL version 2.19.3"
    )
    assert "nccl_debug" not in read_shown_options(nccl).options
    ctx = message_context(nccl, ("nccl-version-network-ib", 0.9))
    action = "Set NCCL_DEBUG=INFO and rerun to read NCCL's own warning."
    assert validate(draft(action, "nccl-version-network-ib"), ctx).premises_ok
    shown = read_shown_options(
        "Rerun with NCCL_DEBUG=WARN.", logs=["NCCL_DEBUG=INFO python train.py"]
    )
    assert shown.options["nccl_debug"][1] == "INFO"  # a report elsewhere still counts


def test_a_step_changing_an_option_or_checking_it_is_not_a_repeat() -> None:
    ctx = _ctx(
        "ValueError: No available memory for the cache blocks.",
        "vllm-no-memory-cache-blocks",
        logs=("vllm serve m --gpu-memory-utilization 0.9",),
    )
    for action, contradicted in [
        ("Raise `gpu_memory_utilization` to 0.95.", False),
        ("Lower `gpu_memory_utilization`.", False),
        ("Check `gpu_memory_utilization` against the free memory.", False),
        ("Set `gpu_memory_utilization` to 0.9.", True),
        ("Set `gpu_memory_utilization=0.90` when starting the engine.", True),
    ]:
        check = validate(draft(action, "vllm-no-memory-cache-blocks"), ctx)
        assert check.premises_ok is not contradicted, action
    auto = _ctx(
        "ValueError: Some modules are dispatched on the CPU or the disk.",
        "bitsandbytes-cpu-offload-dispatch",
        logs=('model = AutoModelForCausalLM.from_pretrained(name, device_map="auto")',),
    )
    one_gpu = 'Put the whole model on one GPU: `device_map={"": 0}` instead of `"auto"`.'
    assert validate(draft(one_gpu, "bitsandbytes-cpu-offload-dispatch"), auto).premises_ok


def test_a_step_names_the_options_it_sets_in_its_own_words() -> None:
    def sets(action: str) -> list[tuple[str, str | None, str]]:
        return [(o.key, o.value, o.how) for o in options_set_by(action)]

    assert sets("Pass `--trust-remote-code`.") == [("trust_remote_code", "", "set")]
    assert sets("Set `num_labels` / `num_classes` to the value the checkpoint used.")[0][1] not in (
        None,
        "",
    )
    assert sets("Remove `--enforce-eager` from the command.") == [("enforce_eager", "", "unset")]
    assert sets("Export `JAX_ENABLE_X64=1` before starting Python.") == [
        ("jax_enable_x64", "1", "set")
    ]
    assert option_key("--Enforce-Eager") == option_key("ENFORCE_EAGER") == "enforce_eager"


ONE_STEP_RUNBOOK = """---
title: Container without GPU
failure_class: cuda_arch_or_driver
signals: [container]
sources: [https://example.org/docs/containers]
---
## Remediation

1. **Start the container with GPU access (`docker run --gpus all`).** Reason: without it the
   device nodes are not mounted.
"""


def test_the_generic_runbook_fallback_is_an_abstention_that_fails_validation() -> None:
    runbook = parse_runbook(ONE_STEP_RUNBOOK, "gpu.md")
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message=NO_GPU,
        logs=[{"message": DOCKER}],
        evidence=[evidence_from_runbook(runbook, 0.9)],
    )
    fallback = OfflineProvider().suggest(ctx)  # its only step is contradicted
    assert fallback.abstained
    check = validate(fallback, ctx)
    assert not check.ok and not check.placeholders_ok
    generic = draft("Apply the remediation of the runbook 'CUDA not available'.", runbook.slug)
    assert not validate(generic, ctx).placeholders_ok
    for text in ("Use the value <n> from the log.", "Set `max_length` to {value}."):
        assert not validate(draft(text, runbook.slug), ctx).placeholders_ok


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=3000), logs=st.lists(st.text(max_size=500), max_size=5))
def test_any_text_gives_shown_options_without_raising(text: str, logs: list[str]) -> None:
    shown = read_shown_options(text, logs, inference_context={"cmd": text[:200]})
    assert len(shown.options) <= 300
    options_set_by(text)


@settings(max_examples=100, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("-=_:'\"`{}()[], aZ09.$\n")), min_size=0, max_size=4000
    )
)
def test_adversarial_option_syntax_gives_an_answer(text: str) -> None:
    read_shown_options(text, [text])
    options_set_by(text)


def _seconds(build: str, size: int) -> float:
    """The best of three timings (the machine is shared) of both parsers on ``size`` chars."""
    text = (build * (size // len(build) + 1))[:size]
    frame = make_frame("a.py", "f", 1, context_line=text)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        read_shown_options(text, [text, text[::-1]], [frame], {"cmd": text})
        options_set_by(text)
        best = min(best, time.perf_counter() - started)
    return best


def test_reading_options_is_linear_in_the_input() -> None:
    for piece in ("--a", "a=", "'a': ", "`a", "-- ", "a_b ", "A=1 ", "x=" + "'" * 3, "$ a -"):
        small, large = _seconds(piece, 5_000), _seconds(piece, 200_000)
        # Every reader caps its input, so 40x the text costs about the same; the floor
        # absorbs the shared machine's noise, a backtracking engine would take seconds.
        assert large < 1.0 and large <= 10 * max(small, 0.05), piece
