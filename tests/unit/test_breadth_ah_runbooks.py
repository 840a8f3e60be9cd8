"""Failure kinds of the fifth breadth batch (eval/realworld/cases-ah.jsonl) route to runbooks
written for them from their libraries' documentation (issue 16).

Each kind is one any project can hit: a Windows torch build without libuv asked for a libuv
TCPStore, Keras 3 refusing Keras 2 layer keywords, ONNX Runtime without a ConvInteger kernel
for int8 weights and its exhaustive cuDNN search on the first run, a `Trainer.compute_loss`
override older than the keywords transformers passes, a callback monitoring a metric that is
never logged, a chat template that refuses the message roles, Orbax refusing a relative
directory, FSDP loading weights on the meta device, TensorRT's parser meeting a uint8 tensor,
and a paged bitsandbytes optimizer where CUDA unified memory paging is unavailable. The
wordings are the libraries' own messages in other spellings than any one case (other layers,
names, paths); each is sent as a bare incident through lexical retrieval and the offline
provider: the runbook comes first and its action names the documented fix. Errors of other
kinds must not match the new signals.
"""

from __future__ import annotations

from tests.support.vendor_checks import Wording, batch_tests

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "torch-distributed-tcpstore-libuv",
        "RuntimeError",
        "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
        ("USE_LIBUV=0",),
    ),
    Wording(
        "keras3-legacy-layer-arguments",
        "ValueError",
        "ValueError: Unrecognized keyword arguments passed to Embedding: {'batch_input_shape':"
        " [32, None]}",
        ("batch_shape",),
    ),
    Wording(
        "onnxruntime-convinteger-quantized-conv",
        "NotImplemented",
        "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for"
        " ConvInteger(10) node with name '/backbone/conv1/Conv_quant'",
        ("QUInt8",),
    ),
    Wording(
        "hf-trainer-compute-loss-signature",
        "TypeError",
        "TypeError: DistillationTrainer.compute_loss() got an unexpected keyword argument"
        " 'num_items_in_batch'",
        ("num_items_in_batch=None",),
    ),
    Wording(
        "callback-monitor-metric-not-logged",
        "RuntimeError",
        "RuntimeError: Early stopping conditioned on metric `val_acc` which is not available."
        " Pass in or modify your `EarlyStopping` callback to use any of the following:"
        " `train_loss`, `val/accuracy`",
        ("monitor",),
    ),
    Wording(
        "chat-template-role-alternation",
        "TemplateError",
        "jinja2.exceptions.TemplateError: Conversation roles must alternate"
        " user/assistant/user/assistant/...",
        ("system prompt",),
    ),
    Wording(
        "chat-template-role-alternation",
        "TemplateError",
        "jinja2.exceptions.TemplateError: System role not supported",
        ("system prompt",),
    ),
    Wording(
        "orbax-checkpoint-absolute-path",
        "ValueError",
        "ValueError: Checkpoint path should be absolute. Got"
        " outputs/ckpt/1000.orbax-checkpoint-tmp",
        ("abspath",),
    ),
    Wording(
        "tensorrt-uint8-network-input",
        "none (TensorRT parser error)",
        "[E] [TRT] ModelImporter.cpp:726: ERROR: input_tensor:0:232 In function importInput:"
        " Unsupported ONNX data type: UINT8 (2)",
        ("float32",),
    ),
    Wording(
        "bitsandbytes-paged-optimizer-unsupported",
        "none (bitsandbytes C error)",
        "Error operation not supported at line 393 in file"
        " /src/bitsandbytes/csrc/pythonInterface.c",
        ("adamw_torch",),
    ),
    # fsdp-cpu-ram-efficient-loading: its message is any meta-device model's, so its signal
    # needs FSDP evidence and a bare message goes to torch-model-on-meta-device; it is routed
    # with that evidence in tests/unit/test_signal_needs.py.
)

#: slug -> errors of other kinds that the new runbooks' signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "torch-distributed-tcpstore-libuv": (
        "RuntimeError: The server socket has failed to listen on any local network address.",
    ),
    "keras3-legacy-layer-arguments": (
        "ValueError: Unrecognized keyword arguments passed to Dense:"
        " {'kernel_initializers': 'ones'}",
    ),
    "onnxruntime-convinteger-quantized-conv": (
        "NOT_IMPLEMENTED : Could not find an implementation for Inverse(1) node with name 'inv'",
    ),
    "onnxruntime-cudnn-conv-algo-search": (
        "torch.compile: the first run is slow because it compiles the graph",
    ),
    "hf-trainer-compute-loss-signature": (
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument"
        " 'evaluation_strategy'",
    ),
    "callback-monitor-metric-not-logged": (
        "KeyError: \"The `metric_for_best_model` training argument is set to 'eval_f1'\"",
    ),
    "chat-template-role-alternation": (
        "ValueError: Cannot use chat template functions because tokenizer.chat_template is"
        " not set and no template argument was passed!",
    ),
    "orbax-checkpoint-absolute-path": (
        "FileNotFoundError: No checkpoint found in /data/run1/checkpoints",
    ),
    "tensorrt-uint8-network-input": (
        "[TRT] ERROR: INVALID_ARGUMENT: getPluginCreator could not find plugin NMS_TRT version 1",
    ),
    "bitsandbytes-paged-optimizer-unsupported": (
        "Error invalid device ordinal at line 359 in file /src/csrc/pythonInterface.c",
    ),
    "fsdp-cpu-ram-efficient-loading": (
        "RuntimeError: Expected all tensors to be on the same device, but found at least two"
        " devices, meta and cuda:0!",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)
