"""Facts about what was installed and what happened, and the steps they choose (issue 16 item 2).

``gpu-support-not-built``: the package in use says it has no GPU support (bitsandbytes'
"compiled without GPU support", "Torch not compiled with CUDA enabled") or lists only CPU
execution providers (ONNX Runtime). Adding CUDA libraries, passing providers or mounting
GPUs into a container cannot help then; installing the GPU build can.

``warning-only`` / ``error-raised``: whether the incident is a warning line with no error
anywhere, or an error. "Ignore it" fits the first and is never the action for the second.

``model-already-quantized``: a GPTQ/AWQ/GGUF/4-bit checkpoint, load or engine flag; "load a
quantized checkpoint" is then no fix for its out-of-memory error.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.environment_facts import environment_facts
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import draft as answer
from tests.support.evidence import message_context

_ORT_CPU_ONLY = (
    "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider"
    " names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'",
    "UserWarning: Specified provider 'TensorrtExecutionProvider' is not in available provider"
    " names.Available providers: 'CPUExecutionProvider'",
    "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:640] CUDAExecutionProvider requested,"
    " available providers: ['CPUExecutionProvider']",
)


@pytest.mark.parametrize(
    "line",
    [
        *_ORT_CPU_ONLY,
        "The installed version of bitsandbytes was compiled without GPU support. 8-bit"
        " optimizers, 8-bit multiplication, and GPU quantization are unavailable.",
        "AssertionError: Torch not compiled with CUDA enabled",
        "RuntimeError: this PyTorch build was built without CUDA support",
        "paddle is not compiled with CUDA, so the GPU place cannot be used",
        "CUDA SETUP: Defaulting to libbitsandbytes_cpu.so...",
        "CUDA SETUP: Loading binary /opt/venv/site-packages/bitsandbytes/libbitsandbytes_cpu.so...",
        r"falling back to C:\venv\Lib\site-packages\bitsandbytes\libbitsandbytes_cpu.dll",
    ],
)
def test_a_build_without_gpu_support_is_read_from_many_wordings(line: str) -> None:
    assert "gpu-support-not-built" in environment_facts([line])


_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)


@settings(max_examples=200, deadline=None)
@given(before=_TEXT, library=_NAME, suffix=st.sampled_from(["so", "dll", "dylib"]))
def test_a_loader_defaulting_to_its_cpu_binary_is_a_build_without_gpu_support(
    before: str, library: str, suffix: str
) -> None:
    line = f"{before}\nCUDA SETUP: Defaulting to lib{library}_cpu.{suffix}..."
    assert "gpu-support-not-built" in environment_facts([line])


@settings(max_examples=200, deadline=None)
@given(text=_TEXT)
def test_text_naming_no_cpu_binary_and_no_missing_gpu_build_gives_no_such_fact(text: str) -> None:
    lowered = text.lower()
    if any(word in lowered for word in ("_cpu", "without", "not", "available providers")):
        return
    assert "gpu-support-not-built" not in environment_facts([text])


@pytest.mark.parametrize(
    "line",
    [
        "Available providers: 'TensorrtExecutionProvider, CUDAExecutionProvider,"
        " CPUExecutionProvider'",
        "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11:"
        " cannot open shared object file: No such file or directory",
        "jaxlib was compiled with CUDA 12.2 support.",
        "CUDA error: no kernel image is available for execution on the device",
        "Please compile with GPU support to get the fast kernels",
        "CUDA SETUP: Loading binary /venv/site-packages/bitsandbytes/libbitsandbytes_cuda121.so",
        "AttributeError: /site-packages/bitsandbytes/libbitsandbytes_cpu.so: undefined symbol:"
        " cquantize_blockwise_fp16_nf4",
        "CUDA SETUP: Defaulting to libbitsandbytes.so...",
    ],
)
def test_builds_that_have_gpu_support_or_say_nothing_of_it_give_no_such_fact(line: str) -> None:
    assert "gpu-support-not-built" not in environment_facts([line])


@pytest.mark.parametrize("message", _ORT_CPU_ONLY)
def test_a_cpu_only_onnxruntime_is_answered_with_the_gpu_package(message: str) -> None:
    ctx = message_context(message, ("onnxruntime-cuda-provider-missing", 0.9))
    action = OfflineProvider().suggest(ctx).action
    assert "onnxruntime-gpu" in action
    # Passing the providers again is what the user already did: the premise is contradicted.
    again = answer(
        "Pass providers explicitly and check the session's result (`sess.get_providers()`).",
        "onnxruntime-cuda-provider-missing",
    )
    assert not validate(again, ctx).premises_ok


def test_a_gpu_build_whose_cuda_libraries_are_missing_may_still_get_the_libraries() -> None:
    message = (
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1480 TryGetProviderInfo_CUDA] Failed to"
        " load library libonnxruntime_providers_cuda.so with error: libcudnn.so.8: cannot open"
        " shared object file"
    )
    ctx = message_context(message, ("onnxruntime-cuda-provider-missing", 0.9))
    assert "gpu-support-not-built" not in read_premises(ctx).facts
    libraries = answer(
        "Install the CUDA and cuDNN libraries the ONNX Runtime release requires.",
        "onnxruntime-cuda-provider-missing",
    )
    assert validate(libraries, ctx).premises_ok


@pytest.mark.parametrize(
    "message",
    [
        "AssertionError: Torch not compiled with CUDA enabled",
        "AssertionError: torch was not compiled with CUDA enabled",
    ],
)
def test_a_cpu_only_torch_is_not_answered_with_container_gpu_flags(message: str) -> None:
    ctx = message_context(message, ("cuda-not-available-cpu-build", 0.9))
    assert "index-url" in OfflineProvider().suggest(ctx).action
    docker = answer(
        "Start containers with GPU access (`docker run --gpus all`).",
        "cuda-not-available-cpu-build",
    )
    assert not validate(docker, ctx).premises_ok


@pytest.mark.parametrize(
    "line",
    [
        "WARNING 08-15 21:06:16 config.py:1514] Casting torch.bfloat16 to torch.float16.",
        "[03/01/2023-10:00:00] [W] [TRT] Skipping tactic 0x0000 due to insufficient memory",
        "[TensorRT] WARNING: Tactic Device request: 4128MB Available: 2048MB. Skipping tactic",
        "/site-packages/x/y.py:12: FutureWarning: `resume_download` is deprecated",
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available providers",
        "W0922 07:46:01.600328 1 pinned_memory_manager.cc:240] Unable to allocate pinned memory",
        "2024-05-01 10:00:00.123456: W tensorflow/core/platform/cpu_feature_guard.cc:182] notice",
    ],
)
def test_a_warning_line_with_no_error_is_warning_only(line: str) -> None:
    facts = environment_facts([line])
    assert "warning-only" in facts
    assert "error-raised" not in facts


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0.",
        "torch.OutOfMemoryError: CUDA out of memory.",
        "Traceback (most recent call last):",
        "[02/03/2022-06:14:51] [E] [TRT] ModelImporter.cpp:726: ERROR: parse failed",
        "[TensorRT] ERROR: INVALID_CONFIG: The engine plan file is generated on an incompatible",
        "E0922 07:46:01.600328 1 model_repository_manager.cc:1007] failed to load 'm'",
        "Error: exception error loading model architecture: unknown model architecture",
    ],
)
def test_an_error_line_is_error_raised_never_warning_only(line: str) -> None:
    facts = environment_facts([line])
    assert "error-raised" in facts
    assert "warning-only" not in facts


def test_a_warning_followed_by_an_error_elsewhere_is_not_warning_only() -> None:
    warning = "WARNING 08-15 21:06:16 config.py:1514] Casting torch.bfloat16 to torch.float16."
    assert "warning-only" not in environment_facts([warning, "Traceback (most recent call last):"])
    assert "warning-only" not in environment_facts([warning, "RuntimeError: CUDA error"])
    # Prose that mentions a warning is neither.
    assert not environment_facts(["We got a warning and then it worked"]) & {
        "warning-only",
        "error-raised",
    }


@pytest.mark.parametrize(
    "message",
    [
        "WARNING 08-15 21:06:16 config.py:1514] Casting torch.bfloat16 to torch.float16.",
        "WARNING 01-02 03:04:05 config.py:1086] Casting torch.float32 to torch.bfloat16.",
        "WARNING 05-05 11:22:33 config.py:998] Downcasting torch.float32 to torch.float16.",
    ],
)
def test_a_vllm_cast_notice_is_answered_with_ignore_and_why(message: str) -> None:
    ctx = message_context(
        message, ("warning-vllm-dtype-cast", 0.9), logs=("vllm serve org/model --port 8000",)
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.action.lower().startswith("ignore")
    assert "harmless" in draft.action.lower()


def test_an_error_in_a_warning_runbook_is_never_answered_with_ignore() -> None:
    message = (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0."
        " Your Tesla T4 GPU has compute capability 7.5."
    )
    ctx = message_context(message, ("warning-vllm-dtype-cast", 0.9))
    assert "ignore" not in OfflineProvider().suggest(ctx).action.lower()
    ignore = answer("Ignore the cast notice when outputs are correct.", "warning-vllm-dtype-cast")
    assert not validate(ignore, ctx).premises_ok


def test_a_tensorrt_build_that_failed_is_not_answered_with_ignore() -> None:
    message = (
        "[01/02/2024-10:00:00] [E] Error[10]: Could not find any implementation for node"
        " /Conv_3 because no tactic could run (Skipping tactic 0x0 due to insufficient memory)"
    )
    ctx = message_context(message, ("warning-tensorrt-tactic-skipped", 0.9))
    assert "ignore" not in OfflineProvider().suggest(ctx).action.lower()
    warning = "[01/02/2024-10:00:00] [W] [TRT] Skipping tactic 0x0 due to insufficient memory"
    ctx = message_context(warning, ("warning-tensorrt-tactic-skipped", 0.9))
    assert OfflineProvider().suggest(ctx).action.lower().startswith("ignore")


@pytest.mark.parametrize(
    "line",
    [
        "out of memory running mixtral gptq model in vllm 0.2.7",
        "model = TheBloke/Mixtral-8x7B-Instruct-v0.1-GPTQ",
        "llama.cpp: loading model from llama-2-7b.Q4_K_M.gguf",
        "model_name = 'unsloth/llama-3-8b-bnb-4bit'",
        "model = AutoModelForCausalLM.from_pretrained(m, load_in_4bit=True)",
        "bnb_config = BitsAndBytesConfig(load_in_4bit=True)",
        "vllm serve Qwen/Qwen2-7B-Instruct-AWQ --quantization awq",
        "text-generation-launcher --model-id m --quantize gptq",
        'llm = LLM(model=m, quantization="fp8")',
    ],
)
def test_a_quantized_model_is_read_from_names_loads_and_flags(line: str) -> None:
    assert "model-already-quantized" in environment_facts([line])


@pytest.mark.parametrize(
    "line",
    [
        "The installed version of bitsandbytes was compiled without GPU support. 8-bit"
        " optimizers, 8-bit multiplication, and GPU quantization are unavailable.",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "model = meta-llama/Llama-2-7b-hf",
        "expected a uint8 tensor",
    ],
)
def test_unquantized_models_and_quantization_words_alone_give_no_such_fact(line: str) -> None:
    assert "model-already-quantized" not in environment_facts([line])


@pytest.mark.parametrize(
    "message",
    [
        "torch.OutOfMemoryError: CUDA out of memory while loading TheBloke/Llama-2-70B-GPTQ",
        "torch.OutOfMemoryError: CUDA out of memory. vllm serve m-AWQ --quantization awq",
    ],
)
def test_a_quantized_model_that_does_not_fit_is_not_told_to_quantize(message: str) -> None:
    ctx = message_context(message, ("cuda-oom-model-too-large", 0.9))
    quantize = answer(
        "Load a quantized checkpoint (AWQ/GPTQ/FP8 or bitsandbytes 8-bit/4-bit).",
        "cuda-oom-model-too-large",
    )
    assert not validate(quantize, ctx).premises_ok
    assert "quantized checkpoint" not in OfflineProvider().suggest(ctx).action


def test_an_unquantized_model_that_does_not_fit_may_be_told_to_quantize() -> None:
    ctx = message_context(
        "torch.OutOfMemoryError: CUDA out of memory loading meta-llama/Llama-2-70b-hf",
        ("cuda-oom-model-too-large", 0.9),
    )
    quantize = answer(
        "Load a quantized checkpoint (AWQ/GPTQ/FP8 or bitsandbytes 8-bit/4-bit).",
        "cuda-oom-model-too-large",
    )
    assert validate(quantize, ctx).premises_ok
