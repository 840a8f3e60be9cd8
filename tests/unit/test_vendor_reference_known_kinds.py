"""Errors documented on vendors' troubleshooting, FAQ, migration and configuration pages no
runbook cited yet, for kinds the corpus already had (issue 16, second batch): vLLM
(troubleshooting, engine arguments, distributed serving, memory), SGLang tuning, the TGI
launcher, DeepSpeed's config and install pages, torchrun, Keras 3 migration, llama.cpp,
bitsandbytes, ONNX Runtime's CUDA provider, PEFT troubleshooting, transformers quantization,
Hub gated repositories and environment variables, safetensors, TensorRT.

Each wording is the message as the page (or the library it documents) prints it, with the
page cited in a comment; its fix terms are the words of the fix that page documents. Routed
to a runbook whose action names the fix: 20 of 23 before and after the second batch's
runbooks (the new kinds are in ``test_vendor_reference_runbooks.py``: 0 of 25 -> 25 of 25).
A wording that does not reach its fix is listed in ``EXPECTED_MISS`` and runs as a strict
xfail, so a change that starts routing it fails the test until the entry is removed.
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
    # (Python multiprocessing)
    Wording(
        "dataloader-pickling-spawn",
        "RuntimeError",
        "An attempt has been made to start a new process before the current process has"
        " finished its bootstrapping phase. This probably means that you are not using fork to"
        " start your child processes and you have forgotten to use the proper idiom in the main"
        ' module: if __name__ == "__main__": freeze_support()',
        ("__main__",),
    ),
    Wording(
        "cuda-fork-subprocess-reinit",
        "RuntimeError",
        "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you"
        " must use the 'spawn' start method",
        ("spawn",),
    ),
    # https://www.deepspeed.ai/docs/config-json/#batch-size-related-parameters
    Wording(
        "deepspeed-config-trainer-mismatch",
        "AssertionError",
        "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu *"
        " gradient_acc_step * world_size 16 != 2 * 1 * 4",
        ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps"),
    ),
    # https://www.deepspeed.ai/docs/config-json/#bfloat16-training-options
    Wording(
        "amp-loss-scale-overflow",
        "Exception",
        "Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
        ("bf16",),
    ),
    # https://docs.pytorch.org/docs/stable/elastic/run.html
    Wording(
        "distributed-rendezvous-init",
        "torch.distributed.DistNetworkError",
        "The server socket has failed to listen on any local network address. port: 29500,"
        " useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
        ("--master_port",),
    ),
    Wording(
        "distributed-rendezvous-init",
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError",
        "The connection to the C10d store has failed. See inner exception for details.",
        ("MASTER_ADDR",),
    ),
    # https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables
    Wording(
        "hf-hub-offline-connection",
        "huggingface_hub.errors.LocalEntryNotFoundError",
        "Cannot find an appropriate cached snapshot folder for the specified revision on the"
        " local disk and outgoing traffic has been disabled. To enable repo look-ups and"
        " downloads online, pass 'local_files_only=False' as input.",
        ("snapshot_download",),
    ),
    # https://www.deepspeed.ai/tutorials/advanced-install/
    Wording(
        "deepspeed-op-build-cuda-home",
        "deepspeed.ops.op_builder.builder.MissingCUDAException",
        "CUDA_HOME does not exist, unable to compile CUDA op(s)",
        ("CUDA_HOME",),
    ),
    # https://docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/advanced.html
    # (engines are specific to the GPU model and TensorRT version they were built with)
    Wording(
        "version-tensorrt-engine-mismatch",
        "none (TensorRT error log)",
        "[TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting"
        " compute 8.6 got compute 8.0, please rebuild.",
        ("Rebuild",),
    ),
    # https://docs.vllm.ai/en/latest/configuration/engine_args.html (--dtype)
    Wording(
        "serving-bf16-checkpoint-old-gpu",
        "ValueError",
        "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla"
        " T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting"
        " the `dtype` flag in CLI, for example: --dtype=half.",
        ("--dtype half",),
    ),
    # https://docs.vllm.ai/en/latest/configuration/conserving_memory.html
    Wording(
        "vllm-max-model-len-kv-cache",
        "ValueError",
        "The model's max seq len (32768) is larger than the maximum number of tokens that can be"
        " stored in KV cache (20624). Try increasing `gpu_memory_utilization` or decreasing"
        " `max_model_len` when initializing the engine.",
        ("--max-model-len",),
    ),
    # https://docs.vllm.ai/en/latest/serving/distributed_serving.html
    Wording(
        "vllm-tensor-parallel-divisibility",
        "ValueError",
        "Total number of attention heads (32) must be divisible by tensor parallel size (3).",
        ("tensor parallel size",),
    ),
    # https://docs.sglang.io/advanced_features/hyperparameter_tuning.html
    Wording(
        "sglang-mem-fraction-static",
        "warning (logging)",
        "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.9998"
        " -> 1.0000",
        ("--mem-fraction-static",),
    ),
    # https://huggingface.co/docs/text-generation-inference/en/reference/launcher
    Wording(
        "tgi-warmup-prefill-memory",
        "none (launcher error)",
        "Not enough memory to handle 4096 prefill tokens. You need to decrease"
        " `--max-batch-prefill-tokens`",
        ("--max-batch-prefill-tokens",),
    ),
    # https://keras.io/guides/migrating_to_keras_3/
    Wording(
        "keras-load-model-path-not-found",
        "ValueError",
        "File format not supported: filepath=saved_model_dir. Keras 3 only supports V3 `.keras`"
        " files and legacy H5 format files (`.h5` extension). Note that the legacy SavedModel"
        " format is not supported by `load_model()` in Keras 3. In order to reload a TensorFlow"
        " SavedModel as an inference-only layer in Keras 3, use"
        " `keras.layers.TFSMLayer(saved_model_dir, call_endpoint='serving_default')`",
        ("TFSMLayer",),
    ),
    # https://github.com/ggml-org/llama.cpp/blob/master/docs/build.md
    Wording(
        "serving-engine-unsupported-architecture",
        "none (llama.cpp log)",
        "llama_model_load: error loading model: error loading model architecture: unknown model"
        " architecture: 'gemma3'",
        ("Upgrade",),
    ),
    # https://huggingface.co/docs/bitsandbytes/main/en/installation
    Wording(
        "bitsandbytes-no-gpu-support",
        "UserWarning",
        "The installed version of bitsandbytes was compiled without GPU support. 8-bit"
        " optimizers, 8-bit multiplication, and GPU quantization are unavailable.",
        ("pip install -U bitsandbytes",),
    ),
    # https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements
    Wording(
        "onnxruntime-cuda-provider-missing",
        "none (ONNX Runtime error log)",
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1744 TryGetProviderInfo_CUDA]"
        ' LoadLibrary failed with error 126 "" when trying to load'
        ' "C:\\Python311\\Lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"',
        ("onnxruntime-gpu",),
    ),
    # https://huggingface.co/docs/peft/developer_guides/troubleshooting (dtype-related issues)
    Wording(
        "amp-unscale-fp16-gradients",
        "ValueError",
        "Attempting to unscale FP16 gradients.",
        ("float32",),
    ),
    # https://huggingface.co/docs/peft/developer_guides/troubleshooting
    Wording(
        "peft-target-modules-not-found",
        "ValueError",
        "Please specify `target_modules` in `peft_config`",
        ("target_modules",),
    ),
    # https://huggingface.co/docs/transformers/main/en/quantization/bitsandbytes
    Wording(
        "quantized-model-distributed-device-map",
        "ValueError",
        "You can't train a model that has been loaded in 8-bit precision on a different device"
        " than the one you're training on. Make sure you loaded the model on the correct device"
        " using for example `device_map={'':torch.cuda.current_device()}` or"
        " `device_map={'':torch.xpu.current_device()}`",
        ("device_map",),
    ),
    # https://huggingface.co/docs/hub/models-gated (gated repositories, models and datasets)
    Wording(
        "model-hub-auth-gated",
        "datasets.exceptions.DatasetNotFoundError",
        "Dataset 'org/gated-evals' is a gated dataset on the Hub. You must be authenticated to"
        " access it.",
        ("HF_TOKEN",),
    ),
    # https://huggingface.co/docs/safetensors (header of a truncated file)
    Wording(
        "model-file-corrupted-download",
        "safetensors_rust.SafetensorError",
        "Error while deserializing header: MetadataIncompleteBuffer",
        ("download",),
    ),
)


#: Wordings (by id) that do not reach their documented fix at this commit: strict xfail.
#: Both are step choices inside existing runbooks: the bare DeepSpeed batch assertion gets the
#: HF Trainer step ("auto") before the two-of-three step the config page documents; the
#: bitsandbytes warning's runbook ranks first but the step comes from
#: bitsandbytes-cuda-setup-failed (whose "pip install -U bitsandbytes" names the fix too).
#: (The C10d store connection now reaches distributed-rendezvous-init's step for stores the
#: other nodes cannot reach, which names MASTER_ADDR; cases-ar.)
EXPECTED_MISS: frozenset[str] = frozenset(
    {
        "Check batch related parameters. train_batch_size is not equa",
        "The installed version of bitsandbytes was compiled without G",
    }
)


@pytest.mark.parametrize("wording", wording_params(WORDINGS, EXPECTED_MISS))
def test_the_documented_message_routes_to_its_documented_fix(wording: Wording) -> None:
    check_routes_to_its_fix(wording)


def test_expected_misses_name_wordings_of_this_table() -> None:
    check_expected_misses_named(WORDINGS, EXPECTED_MISS)
