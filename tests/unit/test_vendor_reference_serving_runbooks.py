"""Errors documented on serving engines', runtimes' and libraries' own troubleshooting, FAQ,
argument and requirements pages for kinds no runbook covered (issue 16, third batch): vLLM's
troubleshooting page, quantization and distributed serving, the llama.cpp server, Ollama's
FAQ, safetensors, Accelerate's troubleshooting guide and ONNX Runtime's execution-provider
requirements.

Each wording is the message as the page (or the library the page documents) prints it, with
the page cited in a comment; its fix terms are the words of the fix that page documents. It
must be found first over the bundled corpus by lexical retrieval and get an action naming
the fix (:mod:`tests.support.vendor_checks`); the runbooks' signals leave look-alikes of
other kinds alone. Before the runbooks these wordings are for (9 kinds), none of the 11
routed; after, all 11. Kinds the corpus already had are in
``test_vendor_reference_serving_known_kinds.py``.
"""

from __future__ import annotations

import pytest

from tests.support.vendor_checks import (
    Wording,
    check_cites_sources,
    check_look_alike_unmatched,
    check_routes_to_its_fix,
)

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
    # https://Huggingface.co/docs/accelerate/basic_tutorials/troubleshooting (hanging code and
    # timeout errors; operational debug mode)
    Wording(
        "accelerate-operation-shape-mismatch",
        "accelerate.utils.operations.DistributedOperationException",
        "Cannot apply desired operation due to shape mismatches. All shapes across devices must"
        " be valid. Operation: `accelerate.utils.operations.broadcast` Input shapes: - Process"
        " 0: [1, 5] - Process 1: [1, 2, 5]",
        ("same shape",),
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


#: slug -> errors of other kinds that the new runbooks' signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "vllm-model-architecture-inspect-failed": (
        "ValueError: Model architectures ['FooForCausalLM'] are not supported for now."
        " Supported architectures: dict_keys(['LlamaForCausalLM'])",
    ),
    "vllm-quantization-dtype-unsupported": (
        "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum"
        " capability: 80. Current capability: 75.",
        "WARNING config.py:1656] Casting torch.bfloat16 to torch.float16.",
    ),
    "vllm-ray-placement-group-gpus": (
        "ValueError: Total number of attention heads (32) must be divisible by tensor parallel"
        " size (3).",
    ),
    "llama-cpp-server-context-size": (
        "llama_model_load: error loading model: unknown model architecture: 'gemma3'",
        "ValueError: Requested tokens (5120) exceed context window of 4096",
    ),
    "ollama-port-in-use": (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local"
        " network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message:"
        " address already in use",
        "Error: could not connect to ollama app, is it running?",
    ),
    "safetensors-non-contiguous-tensor-save": (
        "RuntimeError: view size is not compatible with input tensor's size and stride (at least"
        " one dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
        "RuntimeError: Some tensors share memory, this will lead to duplicate memory on disk and"
        " potential differences when loading them again",
    ),
    "accelerate-operation-shape-mismatch": (
        "RuntimeError: Sizes of tensors must match except in dimension 0. Expected size 5 but"
        " got size 2 for tensor number 1 in the list.",
        "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5,"
        " OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600321"
        " milliseconds before timing out.",
    ),
    "onnxruntime-ep-package-not-installed": (
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider"
        " names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'",
    ),
    "onnxruntime-tensorrt-ep-libraries": (
        "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.12:"
        " cannot open shared object file: No such file or directory",
        "OSError: libnvinfer.so.8: cannot open shared object file: No such file or directory",
    ),
}


@pytest.mark.parametrize("wording", WORDINGS, ids=[w.message[:60] for w in WORDINGS])
def test_the_documented_message_routes_to_its_documented_fix(wording: Wording) -> None:
    check_routes_to_its_fix(wording)


@pytest.mark.parametrize(
    ("slug", "text"), [(s, t) for s, texts in LOOK_ALIKES.items() for t in texts]
)
def test_errors_of_other_kinds_do_not_match_the_new_signals(slug: str, text: str) -> None:
    check_look_alike_unmatched(slug, text)


def test_each_new_runbook_cites_public_sources_and_has_signals() -> None:
    check_cites_sources(set(LOOK_ALIKES))


def test_every_new_runbook_has_wordings_and_look_alikes() -> None:
    assert {w.slug for w in WORDINGS} == set(LOOK_ALIKES)
    assert len(LOOK_ALIKES) == 9
