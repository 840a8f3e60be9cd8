"""Errors documented on serving engines', launchers' and runtimes' own troubleshooting, FAQ,
argument and error-reference pages (issue 16, third batch) for kinds the corpus already had:
vLLM (troubleshooting, engine arguments, quantization hardware), SGLang, TGI, llama.cpp,
Ollama, TensorRT-LLM, torch.compile, torchrun / torch.distributed.elastic, safetensors,
Accelerate (big model inference, FSDP, DeepSpeed), Triton Inference Server and ONNX Runtime's
CUDA execution provider.

Each wording is the message as the page (or the library it documents) prints it, with the
page cited in a comment; its fix terms are the words of the fix that page documents. Routed
to a runbook whose action names the fix: 20 of 24 at a778232, 21 of 24 once SGLang's graph
capture OOM picks the step that lowers --mem-fraction-static (premise cuda-graphs-captured).
A wording that does not reach its fix is listed in ``EXPECTED_MISS`` and runs as a strict
xfail, so a change that starts routing it fails the test until the entry is removed. The
kinds no runbook covered are in ``test_vendor_reference_serving_runbooks.py``.
"""

from __future__ import annotations

import pytest

from tests.support.vendor_checks import (
    Wording,
    check_expected_misses_named,
    check_routes_to_its_fix,
    wording_params,
)

WORDINGS: tuple[Wording, ...] = (
    # https://raw.githubusercontent.com/vllm-project/vllm/main/docs/usage/troubleshooting.md
    # (model not supported; Python multiprocessing)
    Wording(
        "serving-engine-unsupported-architecture",
        "ValueError",
        "Model architectures ['FooForCausalLM'] are not supported for now. Supported"
        " architectures: dict_keys(['AquilaModel', 'LlamaForCausalLM'])",
        ("Upgrade",),
    ),
    Wording(
        "cuda-fork-subprocess-reinit",
        "warning (logging)",
        "WARNING 12-11 14:50:37 multiproc_worker_utils.py:281] CUDA was previously initialized."
        " We must use the `spawn` multiprocessing start method. Setting"
        " VLLM_WORKER_MULTIPROC_METHOD to 'spawn'.",
        ("__main__",),
    ),
    # https://docs.vllm.ai/en/latest/features/quantization/index.html
    Wording(
        "vllm-quantization-method-mismatch",
        "ValueError",
        "Quantization method specified in the model config (awq) does not match the"
        " quantization method specified in the `quantization` argument (gptq).",
        ("--quantization",),
    ),
    # https://docs.vllm.ai/en/latest/features/quantization/supported_hardware.html
    Wording(
        "serving-gpu-compute-capability",
        "ValueError",
        "The quantization method fp8 is not supported for the current GPU. Minimum capability:"
        " 80. Current capability: 75.",
        ("quantization format",),
    ),
    # https://docs.sglang.io/advanced_features/hyperparameter_tuning.html
    Wording(
        "sglang-mem-fraction-static",
        "RuntimeError",
        "Not enough memory. Please try to increase --mem-fraction-static.",
        ("--mem-fraction-static",),
    ),
    Wording(
        "sglang-mem-fraction-static",
        "Exception",
        "Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.00 GiB. Possible"
        " solutions: 1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7) 2. set"
        " --cuda-graph-max-bs to a smaller value (e.g., 16) 3. disable torch compile by not"
        " using --enable-torch-compile 4. disable CUDA graph by --disable-cuda-graph. (Not"
        " recommended. Huge performance loss)",
        ("Lower", "--mem-fraction-static"),
    ),
    # https://huggingface.co/docs/text-generation-inference/en/reference/launcher
    Wording(
        "tgi-token-limits",
        "none (launcher error)",
        'Error: ArgumentValidation("`max_input_tokens` must be < `max_total_tokens`")',
        ("--max-total-tokens",),
    ),
    Wording(
        "tgi-token-limits",
        "none (TGI validation error)",
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given:"
        " 4000 `inputs` tokens and 200 `max_new_tokens`",
        ("max_new_tokens",),
    ),
    # https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (--n-gpu-layers)
    Wording(
        "llama-cpp-gpu-offload-memory",
        "none (llama.cpp log)",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0:"
        " cudaMalloc failed: out of memory",
        ("-ngl",),
    ),
    # https://docs.ollama.com/faq (how do I configure / expose the server)
    Wording(
        "ollama-server-unreachable",
        "none (ollama CLI)",
        "Error: could not connect to ollama app, is it running?",
        ("ollama serve",),
    ),
    # https://docs.ollama.com/troubleshooting (CPUs without AVX)
    Wording(
        "ollama-runner-terminated",
        "none (ollama CLI)",
        "Error: llama runner process has terminated: signal: illegal instruction (core dumped)",
        ("AVX",),
    ),
    # https://nvidia.github.io/TensorRT-LLM/ (one MPI rank per engine rank)
    Wording(
        "tensorrt-llm-world-size-mpi",
        "none (TensorRT-LLM log)",
        "[TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp"
        " (/src/tensorrt_llm/runtime/worldConfig.cpp:99)",
        ("mpirun",),
    ),
    # https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html
    Wording(
        "torch-compile-backend-compiler-failed",
        "torch._dynamo.exc.BackendCompilerFailed",
        "backend='inductor' raised: RuntimeError: Cannot find a working triton installation."
        " Either the package is not installed or it is too old. More information on installing"
        " Triton can be found at https://github.com/openai/triton",
        ("Triton",),
    ),
    Wording(
        "torch-compile-recompile-limit",
        "warning (logging)",
        "torch._dynamo hit config.recompile_limit (8) function: 'forward' (model.py:42) last"
        " reason: 0/7: tensor 'x' size mismatch at index 0. expected 8, actual 16",
        ("dynamic",),
    ),
    # https://docs.pytorch.org/docs/stable/elastic/errors.html
    Wording(
        "torchrun-child-failed-exitcode",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
        "train.py FAILED. Failures: <NO_OTHER_FAILURES> Root Cause (first observed failure):"
        " [0]: time: 2024-05-01_10:00:00 host: node1 rank: 0 (local_rank: 0) exitcode: 1 (pid:"
        " 1234) error_file: <N/A> traceback : To enable traceback see:"
        " https://pytorch.org/docs/stable/elastic/errors.html",
        ("@record",),
    ),
    # https://huggingface.co/docs/safetensors/torch_shared_tensors
    Wording(
        "safetensors-shared-tensors-save",
        "RuntimeError",
        "Some tensors share memory, this will lead to duplicate memory on disk and potential"
        " differences when loading them again: [{'lm_head.weight', 'model.embed_tokens.weight'}]."
        " A potential way to correctly save your model is to use `save_model`. More information"
        " at https://huggingface.co/docs/safetensors/torch_shared_tensors",
        ("save_model",),
    ),
    # https://docs.rs/safetensors/0.4.2/safetensors/tensor/enum.SafeTensorError.html
    # (HeaderTooLarge: the first 8 bytes do not announce a safetensors header, e.g. a Git LFS
    # pointer file)
    Wording(
        "model-file-git-lfs-pointer",
        "safetensors_rust.SafetensorError",
        "Error while deserializing header: HeaderTooLarge",
        ("git lfs pull",),
    ),
    # https://huggingface.co/docs/accelerate/main/en/usage_guides/big_modeling
    Wording(
        "accelerate-offload-disk-folder",
        "ValueError",
        "We need an `offload_dir` to dispatch this model according to this `device_map`, the"
        " following submodules need to be offloaded: model.layers.30, model.norm, lm_head.",
        ("offload_folder",),
    ),
    # https://huggingface.co/docs/accelerate/usage_guides/fsdp
    Wording(
        "fsdp-transformer-layer-cls-to-wrap",
        "Exception",
        "Could not find the transformer layer class LlamaDecoderLayer in the model.",
        ("transformer_layer_cls_to_wrap",),
    ),
    # https://huggingface.co/docs/accelerate/usage_guides/deepspeed
    Wording(
        "deepspeed-config-trainer-mismatch",
        "ValueError",
        "When using DeepSpeed, `accelerate.prepare()` requires you to pass at least one of"
        " training or evaluation dataloaders with `batch_size` attribute returning an integer"
        " value or alternatively set an integer value in `train_micro_batch_size_per_gpu` in the"
        " deepspeed config file or assign integer value to `AcceleratorState().deepspeed_plugin"
        ".deepspeed_config['train_micro_batch_size_per_gpu']`.",
        ("train_micro_batch_size_per_gpu",),
    ),
    # https://github.com/triton-inference-server/server/blob/main/docs/user_guide/model_configuration.md
    Wording(
        "triton-config-dims-batch-axis",
        "none (Triton server log)",
        "failed to load 'densenet_onnx' version 1: Invalid argument: model 'densenet_onnx',"
        " tensor 'data_0': the model expects 4 dimensions (shape [1,3,224,224]) but the model"
        " configuration specifies 3 dimensions (an initial batch dimension because"
        " max_batch_size > 0 followed by the explicit tensor shape, making complete shape"
        " [-1,3,224])",
        ("max_batch_size",),
    ),
    # https://github.com/triton-inference-server/backend/blob/main/README.md
    Wording(
        "triton-backend-library-not-found",
        "none (Triton server log)",
        "failed to load 'resnet' version 1: Invalid argument: unable to find"
        " 'libtriton_pytorch.so' or 'pytorch/model.py' for model 'resnet', in"
        " /opt/tritonserver/backends/pytorch",
        ("backend:",),
    ),
    # https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements
    Wording(
        "onnxruntime-cuda-provider-missing",
        "none (ONNX Runtime error log)",
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1744 TryGetProviderInfo_CUDA]"
        " /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1426"
        " onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 :"
        " FAIL : Failed to load library libonnxruntime_providers_cuda.so with error:"
        " libcudnn.so.9: cannot open shared object file: No such file or directory",
        ("cuDNN",),
    ),
)


#: Wordings (by id) that do not reach their documented fix at this commit: strict xfail.
#: The Ollama CLI's "is it running?" reaches its runbook but the container-host step (no step
#: starts the server); Accelerate's DeepSpeed batch-size message gets the Trainer "auto" step;
#: the offload_dir message ranks device-mismatch-multi-gpu-device-map above
#: accelerate-offload-disk-folder.
EXPECTED_MISS: frozenset[str] = frozenset(
    {
        "Error: could not connect to ollama app, is it running?",
        "We need an `offload_dir` to dispatch this model according to",
        "When using DeepSpeed, `accelerate.prepare()` requires you to",
    }
)


@pytest.mark.parametrize("wording", wording_params(WORDINGS, EXPECTED_MISS))
def test_the_documented_message_routes_to_its_documented_fix(wording: Wording) -> None:
    check_routes_to_its_fix(wording)


def test_expected_misses_name_wordings_of_this_table() -> None:
    check_expected_misses_named(WORDINGS, EXPECTED_MISS)
