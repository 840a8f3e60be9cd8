"""Errors documented on serving engines', runtimes' and libraries' own troubleshooting, FAQ,
argument and requirements pages for kinds no runbook covered (issue 16, third batch): vLLM's
troubleshooting page, quantization and distributed serving, the llama.cpp server, Ollama's
FAQ, safetensors, Accelerate's troubleshooting guide and ONNX Runtime's execution-provider
requirements.

Each wording is the message as the page (or the library the page documents) prints it, with
the page cited in a comment; its fix terms are the words of the fix that page documents. It
must be found first over the bundled corpus by lexical retrieval and get an action naming
the fix (:mod:`tests.support.vendor_checks`). A wording listed in ``EXPECTED_MISS`` runs as
a strict xfail. Kinds the corpus already had are in
``test_vendor_reference_serving_known_kinds.py``.
"""

from __future__ import annotations

import pytest

from tests.support.vendor_checks import Wording, check_routes_to_its_fix

WORDINGS: tuple[Wording, ...] = (
    # https://raw.githubusercontent.com/vllm-project/vllm/main/docs/usage/troubleshooting.md
    # (model failed to be inspected)
    Wording(
        "vllm-model-architecture-inspect-failed",
        "ValueError",
        "Model architectures ['Qwen2AudioForConditionalGeneration'] failed to be inspected."
        " Please check the logs for more details.",
        ("import",),
    ),
    # https://docs.vllm.ai/en/latest/configuration/engine_args.html (--dtype) and
    # https://docs.vllm.ai/en/latest/features/quantization/index.html
    Wording(
        "vllm-quantization-dtype-unsupported",
        "ValueError",
        "torch.bfloat16 is not supported for quantization method awq. Supported dtypes:"
        " [torch.float16]",
        ("--dtype half",),
    ),
    Wording(
        "vllm-quantization-dtype-unsupported",
        "ValueError",
        "torch.float32 is not supported for quantization method gptq. Supported dtypes:"
        " [torch.float16]",
        ("--dtype half",),
    ),
    # https://docs.vllm.ai/en/latest/serving/distributed_serving.html
    Wording(
        "vllm-ray-placement-group-gpus",
        "ValueError",
        "The number of required GPUs exceeds the total number of available GPUs in the"
        " placement group.",
        ("--tensor-parallel-size",),
    ),
    # https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (-c, --ctx-size;
    # -np, --parallel)
    Wording(
        "llama-cpp-server-context-size",
        "none (llama.cpp server error)",
        '{"error":{"code":400,"message":"the request exceeds the available context size, try'
        ' increasing it","type":"exceed_context_size_error","n_prompt_tokens":5120,'
        '"n_ctx":4096}}',
        ("--ctx-size",),
    ),
    # https://docs.ollama.com/faq (OLLAMA_HOST: the bind address)
    Wording(
        "ollama-port-in-use",
        "none (ollama serve)",
        "Error: listen tcp 127.0.0.1:11434: bind: address already in use",
        ("OLLAMA_HOST",),
    ),
    # https://huggingface.co/docs/safetensors/torch_shared_tensors
    Wording(
        "safetensors-non-contiguous-tensor-save",
        "ValueError",
        "You are trying to save a non contiguous tensor: `encoder.weight` which is not allowed."
        " It either means you are trying to save tensors which are reference of each other in"
        " which case it's recommended to save only the full tensors, and reslice at load time,"
        " or simply call `.contiguous()` on your tensor to pack it before saving.",
        (".contiguous()",),
    ),
    # https://huggingface.co/docs/accelerate/basic_tutorials/troubleshooting (hanging code and
    # timeout errors; operational debug mode)
    Wording(
        "accelerate-operation-shape-mismatch",
        "accelerate.utils.operations.DistributedOperationException",
        "Cannot apply desired operation due to shape mismatches. All shapes across devices must"
        " be valid. Operation: `accelerate.utils.operations.broadcast` Input shapes: - Process"
        " 0: [1, 5] - Process 1: [1, 2, 5]",
        ("pad_across_processes",),
    ),
    # https://onnxruntime.ai/docs/execution-providers/ (each provider's install)
    Wording(
        "onnxruntime-ep-package-not-installed",
        "UserWarning",
        "Specified provider 'OpenVINOExecutionProvider' is not in available provider"
        " names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'",
        ("onnxruntime-openvino",),
    ),
    Wording(
        "onnxruntime-ep-package-not-installed",
        "UserWarning",
        "Specified provider 'DmlExecutionProvider' is not in available provider"
        " names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'",
        ("onnxruntime-directml",),
    ),
    # https://onnxruntime.ai/docs/execution-providers/TensorRT-ExecutionProvider.html
    # (requirements table)
    Wording(
        "onnxruntime-tensorrt-ep-libraries",
        "none (ONNX Runtime error log)",
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1548 TryGetProviderInfo_TensorRT]"
        " /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209"
        " onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 :"
        " FAIL : Failed to load library libonnxruntime_providers_tensorrt.so with error:"
        " libnvinfer.so.10: cannot open shared object file: No such file or directory",
        ("LD_LIBRARY_PATH",),
    ),
)


def _id(wording: Wording) -> str:
    return wording.message[:60]


#: Wordings (by id) that do not reach their documented fix at this commit: strict xfail.
#: Before this batch's runbooks, none of them.
EXPECTED_MISS: frozenset[str] = frozenset(_id(w) for w in WORDINGS)


def _marks(wording: Wording) -> list[pytest.MarkDecorator]:
    if _id(wording) in EXPECTED_MISS:
        return [pytest.mark.xfail(strict=True, reason="documented wording not routed yet")]
    return []


@pytest.mark.parametrize(
    "wording",
    [pytest.param(w, id=_id(w), marks=_marks(w)) for w in WORDINGS],
)
def test_the_documented_message_routes_to_its_documented_fix(wording: Wording) -> None:
    check_routes_to_its_fix(wording)
