"""Failure kinds of the breadth batch from Q&A and troubleshooting pages
(eval/realworld/cases-ap.jsonl) route to the runbooks written for them from their vendors'
documentation (issue 16).

cases-ap found kinds the corpus had no runbook for: CUDA tensors shared between processes on
Windows (no CUDA IPC), binary cross-entropy banned under autocast, Keras' mixed-precision
check on a GPU without Tensor Cores, the TensorRT ONNX parser's "must be an initializer",
Torch-TensorRT's missing converter, onnxruntime-genai reading tokenizer files of
transformers 4.45, Accelerate's DeepSpeed placeholder optimizer, an FSDP optimizer built from
the unwrapped model, adapter_config.json fields from another peft release and a harmless
PyTriton log line. The wordings are the messages as the libraries print them (other
parameters, other module names than the cases); each is sent as a bare incident through
lexical retrieval and the offline provider: the runbook comes first and its action names the
documented fix. Errors of neighbouring kinds must not match the new signals.
"""

from __future__ import annotations

from tests.support.vendor_checks import Wording, batch_tests

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "cuda-ipc-windows-multiprocessing",
        "RuntimeError",
        "THCudaCheck FAIL file=..\\torch\\csrc\\generic\\StorageSharing.cpp line=245 error=63 :"
        " OS call failed or operation not supported on this OS",
        ("CPU tensors",),
    ),
    Wording(
        "amp-autocast-unsafe-bce",
        "RuntimeError",
        "RuntimeError: torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe"
        " to autocast.",
        ("BCEWithLogitsLoss",),
    ),
    Wording(
        "warning-tf-mixed-precision-old-gpu",
        "UserWarning",
        "WARNING:tensorflow:Mixed precision compatibility check (mixed_float16): WARNING\nYour"
        " GPUs may run slowly with dtype policy mixed_float16 because they do not have compute"
        " capability of at least 7.0. Your GPUs:\n  Tesla K80, compute capability 3.7",
        ("float32",),
    ),
    Wording(
        "tensorrt-onnx-input-must-be-initializer",
        "RuntimeError",
        "[TRT] [E] ModelImporter.cpp:773: While parsing node number 12 [Resize]:\n"
        'Assertion failed: scales.is_weights() && "Resize scales must be an initializer!"',
        ("polygraphy",),
    ),
    Wording(
        "torch-tensorrt-no-converter",
        "RuntimeError",
        "Lowering failed for node aten.nonzero.default: No converter found",
        ("torch_executed_ops",),
    ),
    Wording(
        "onnxruntime-genai-tokenizer-json-version",
        "RuntimeError",
        "RuntimeError: [json.exception.type_error.302] type must be string, but is array",
        ("onnxruntime-genai",),
    ),
    Wording(
        "deepspeed-dummy-optim-not-replaced",
        "AttributeError",
        "AttributeError: 'DummyOptim' object has no attribute 'step'",
        ("Remove the DeepSpeed setting",),
    ),
    Wording(
        "fsdp-optimizer-before-wrapping",
        "ValueError",
        '  File "/opt/conda/lib/python3.10/site-packages/lightning/pytorch/strategies/fsdp.py",'
        " line 312, in setup_optimizers\nValueError: optimizer got an empty parameter list",
        ("self.trainer.model",),
    ),
    Wording(
        "peft-adapter-config-unknown-field",
        "TypeError",
        "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'use_dora'",
        ("Upgrade peft",),
    ),
    Wording(
        "peft-adapter-config-unknown-field",
        "TypeError",
        "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'merge_weights'",
        ("adapter_config.json",),
    ),
    Wording(
        "warning-pytriton-benign-logs",
        "UserWarning",
        "E0412 10:21:07.123456 1 model_lifecycle.cc:638] Failed to set config modification"
        " time: model_config_content_name_ is empty",
        ("Ignore",),
    ),
)

#: slug -> errors of other kinds that the runbook's signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "cuda-ipc-windows-multiprocessing": ("RuntimeError: CUDA error: operation not supported",),
    "amp-autocast-unsafe-bce": ("RuntimeError: all elements of input should be between 0 and 1",),
    "warning-tf-mixed-precision-old-gpu": (
        "Mixed precision compatibility check (mixed_float16): OK\nYour GPUs will likely run"
        " quickly with dtype policy mixed_float16 as they all have compute capability of at"
        " least 7.0",
    ),
    "tensorrt-onnx-input-must-be-initializer": ("[TRT] [E] Network must have at least one output",),
    "torch-tensorrt-no-converter": ("Block size 2 is smaller than min_block_size 5",),
    "onnxruntime-genai-tokenizer-json-version": (
        "[json.exception.parse_error.101] parse error at line 1, column 1",
    ),
    "deepspeed-dummy-optim-not-replaced": (
        "AttributeError: 'DeepSpeedGPTInference' object has no attribute 'dtype'",
    ),
    "fsdp-optimizer-before-wrapping": (
        "ValueError: some parameters appear in more than one parameter group",
    ),
    "peft-adapter-config-unknown-field": (
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument"
        " 'evaluation_strategy'",
    ),
    "warning-pytriton-benign-logs": (
        "failed to load 'model' version 1: Invalid argument: model config missing",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)
