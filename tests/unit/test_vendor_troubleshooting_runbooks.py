"""Errors documented on vendors' troubleshooting, FAQ and migration pages route to a runbook
whose suggested action is the documented fix (issue 16).

The wordings come from the official documentation of PyTorch (torch.compile troubleshooting,
export, dynamic shapes), JAX (errors page, gotchas), Hugging Face (transformers
troubleshooting and offline mode, the Trainer/TRL renames), ONNX (external data), OpenAI
Triton (``tl.arange``, fused-softmax tutorial), NCCL troubleshooting, the CUDA installation
guide and the NVIDIA Container Toolkit (the runbooks' ``sources``). One wording per
documented message; look-alike errors of other kinds must not match the new signals.
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
    Wording(
        "hf-hub-offline-connection",
        "OSError",
        "We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in"
        " the cached files and it looks like bert-base-uncased is not the path to a directory"
        " containing a file named config.json. Checkout your internet connection or see how to"
        " run the library in offline mode at"
        " 'https://huggingface.co/docs/transformers/installation#offline-mode'.",
        ("HF_HUB_OFFLINE=1",),
    ),
    Wording(
        "hf-hub-offline-connection",
        "ValueError",
        "Connection error, and we cannot find the requested files in the cached path. Please try"
        " again or make sure your Internet connection is on.",
        ("HF_HUB_OFFLINE=1",),
    ),
    Wording(
        "transformers-automodel-task-unsupported",
        "ValueError",
        "Unrecognized configuration class <class"
        " 'transformers.models.t5.configuration_t5.T5Config'> for this kind of AutoModel:"
        " AutoModelForCausalLM. Model type should be one of BartConfig, BertConfig,"
        " BloomConfig, GPT2Config, LlamaConfig.",
        ("architectures", "AutoModelForSeq2SeqLM"),
    ),
    Wording(
        "hf-trainer-renamed-arguments",
        "TypeError",
        "TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
        ("eval_strategy=",),
    ),
    Wording(
        "hf-trainer-renamed-arguments",
        "TypeError",
        "SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'",
        ("processing_class=tokenizer",),
    ),
    Wording(
        "hf-trainer-renamed-arguments",
        "TypeError",
        "SFTTrainer.__init__() got an unexpected keyword argument 'max_seq_length'",
        ("SFTConfig(",),
    ),
    Wording(
        "onnx-model-2gb-external-data",
        "ValueError",
        "Message onnx.ModelProto exceeds maximum protobuf size of 2GB: 2503920348",
        ("save_as_external_data=True",),
    ),
    Wording(
        "nvidia-driver-kernel-module-mismatch",
        "none (nvidia-smi)",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure"
        " that the latest NVIDIA driver is installed and running.",
        ("Install the NVIDIA driver for the running kernel",),
    ),
    Wording(
        "nvidia-driver-kernel-module-mismatch",
        "none (nvidia-smi)",
        "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.127",
        ("Reboot", "modprobe nvidia"),
    ),
    Wording(
        "container-gpu-runtime-missing",
        "none (docker)",
        'docker: Error response from daemon: could not select device driver "" with'
        " capabilities: [[gpu]].",
        ("nvidia-ctk runtime configure",),
    ),
    Wording(
        "container-gpu-runtime-missing",
        "none (nvidia-smi in a container)",
        "Failed to initialize NVML: Unknown Error",
        ("cgroupfs", "CDI"),
    ),
    Wording(
        "nvcc-host-compiler-gpu-arch",
        "none (nvcc)",
        "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU"
        " version! gcc versions later than 12 are not supported! The nvcc flag"
        " '-allow-unsupported-compiler' can be used to override this version check; however,"
        " using an unsupported host compiler may cause compilation failure or incorrect run time"
        " execution. Use at your own risk.",
        ("-ccbin",),
    ),
    Wording(
        "nvcc-host-compiler-gpu-arch",
        "none (nvcc)",
        "nvcc fatal   : Unsupported gpu architecture 'compute_90'",
        ("CUDA toolkit", "CUDA_HOME"),
    ),
    Wording(
        "torch-export-dynamic-shape-constraints",
        "torch._dynamo.exc.UserError",
        'Constraints violated (batch)! For more information, run with TORCH_LOGS="+dynamic".\n'
        "  - Not all values of batch = L['x'].size()[0] in the specified range batch <= 1024 are"
        " valid because batch was inferred to be a constant (4).",
        ("Dim",),
    ),
    Wording(
        "torch-export-dynamic-shape-constraints",
        "torch.fx.experimental.symbolic_shapes.ConstraintViolationError",
        'Constraints violated (height)! For more information, run with TORCH_LOGS="+dynamic".\n'
        "  - Not all values of height = L['x'].size()[2] in the specified range 320 <= height <="
        " 7680 satisfy the generated guard Ne(Mod(((L['x'].size()[2] - 1)//2), 2), 0).\n"
        "Suggested fixes:\n  height = Dim('height', min=320, max=7680)",
        ("Suggested fixes", "Dim"),
    ),
    Wording(
        "torch-inductor-build-toolchain",
        "torch._inductor.exc.InvalidCxxCompiler",
        "No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')",
        ("build-essential",),
    ),
    Wording(
        "torch-inductor-build-toolchain",
        "torch._dynamo.exc.BackendCompilerFailed",
        "backend='inductor' raised:\nCalledProcessError: Command '['/usr/bin/gcc',"
        " '/tmp/tmpq1w2/main.c', '-O3', '-shared', '-fPIC', '-o',"
        " '/tmp/tmpq1w2/cuda_utils.cpython-311-x86_64-linux-gnu.so', '-lcuda',"
        " '-I/usr/include/python3.11']' returned non-zero exit status 1.\n"
        "/tmp/tmpq1w2/main.c:6:10: fatal error: Python.h: No such file or directory",
        ("python3-dev",),
    ),
    Wording(
        "torch-compile-gpu-too-old-for-triton",
        "RuntimeError",
        "Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler,"
        " which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0,"
        " but your device is of CUDA capability 6.0",
        ('backend="aot_eager"',),
    ),
    Wording(
        "jax-random-key-reuse",
        "jax.errors.KeyReuseError",
        "Previously-consumed key passed to jit-compiled function at index 0",
        ("jax.random.split",),
    ),
    Wording(
        "jax-data-dependent-shape-jit",
        "jax.errors.NonConcreteBooleanIndexError",
        "Array boolean indices must be concrete; got ShapedArray(bool[5])",
        ("jnp.where(mask, x, 0)",),
    ),
    Wording(
        "jax-data-dependent-shape-jit",
        "jax.errors.ConcretizationTypeError",
        "Abstract tracer value encountered where concrete value is expected: traced array with"
        " shape bool[10]\nThe size argument of jnp.nonzero must be statically specified to use"
        " jnp.nonzero within JAX transformations.",
        ("size=",),
    ),
    Wording(
        "jax-numpy-call-on-tracer",
        "jax.errors.TracerArrayConversionError",
        "The numpy.ndarray conversion method __array__() was called on traced array with shape"
        " float32[3]",
        ("jax.numpy",),
    ),
    Wording(
        "triton-kernel-arange-power-of-two",
        "triton.compiler.errors.CompilationError",
        "at 14:13:\n    offs = tl.arange(0, G)\n             ^\n"
        'ValueError("arange\'s range must be a power of 2")',
        ("triton.next_power_of_2",),
    ),
    Wording(
        "nccl-ib-memlock-limit",
        "none (NCCL log)",
        "node1:1234:1300 [0] NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory",
        ("memlock",),
    ),
    Wording(
        "nccl-ib-memlock-limit",
        "none (NCCL log)",
        "node1:1234:1300 [0] NCCL WARN Call to ibv_create_cq failed",
        ("memlock",),
    ),
)

#: slug -> errors of other kinds that the runbook's signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "hf-hub-offline-connection": (
        "OSError: bert-base-uncased does not appear to have a file named pytorch_model.bin",
        "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url:"
        " https://huggingface.co/api/models/meta-llama/Llama-2-7b-hf",
    ),
    "transformers-automodel-task-unsupported": (
        "ValueError: The checkpoint you are trying to load has model type `qwen2` but"
        " Transformers does not recognize this architecture.",
    ),
    "hf-trainer-renamed-arguments": (
        "TypeError: LlamaForCausalLM.forward() got an unexpected keyword argument 'token_type_ids'",
        "TypeError: GenerationMixin.generate() got an unexpected keyword argument 'tokenizer'",
    ),
    "onnx-model-2gb-external-data": (
        "[ONNXRuntimeError] : 7 : INVALID_PROTOBUF : Load model from model.onnx failed:Protobuf"
        " parsing failed.",
    ),
    "nvidia-driver-kernel-module-mismatch": (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
        "CUDA driver version is insufficient for CUDA runtime version",
    ),
    "container-gpu-runtime-missing": (
        "RuntimeError: No CUDA GPUs are available",
        "AssertionError: Torch not compiled with CUDA enabled",
    ),
    "nvcc-host-compiler-gpu-arch": (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "/usr/bin/ld: cannot find -lcudart",
    ),
    "torch-export-dynamic-shape-constraints": (
        "torch._dynamo.exc.Unsupported: Dynamic control flow is not supported at the moment.",
    ),
    "torch-inductor-build-toolchain": (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError:"
        " Cannot find a working triton installation.",
        "error: command 'gcc' failed: No such file or directory",
    ),
    "torch-compile-gpu-too-old-for-triton": (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    ),
    "jax-random-key-reuse": (
        "TypeError: JAX encountered invalid PRNG key data: expected key_data.shape to end with"
        " (2,); got shape=(4,)",
    ),
    "jax-data-dependent-shape-jit": (
        "ConcretizationTypeError: Abstract tracer value encountered where concrete value is"
        " expected: traced array with shape bool[]. The problem arose with the `bool` function.",
    ),
    "jax-numpy-call-on-tracer": (
        "TracerIntegerConversionError: The __index__() method was called on traced array with"
        " shape int32[]",
        "TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[]",
    ),
    "triton-kernel-arange-power-of-two": (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 196608,"
        " Hardware limit: 101376.",
    ),
    "nccl-ib-memlock-limit": (
        "NCCL WARN NET/IB : No device found.",
        "include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
    ),
}


@pytest.mark.parametrize("wording", WORDINGS, ids=[w.test_id for w in WORDINGS])
def test_the_documented_message_routes_to_its_documented_fix(wording: Wording) -> None:
    check_routes_to_its_fix(wording)


@pytest.mark.parametrize(
    ("slug", "text"), [(s, t) for s, texts in LOOK_ALIKES.items() for t in texts]
)
def test_errors_of_other_kinds_do_not_match_the_new_signals(slug: str, text: str) -> None:
    check_look_alike_unmatched(slug, text)


def test_each_runbook_cites_public_sources_and_has_signals() -> None:
    check_cites_sources({w.slug for w in WORDINGS} | set(LOOK_ALIKES))
