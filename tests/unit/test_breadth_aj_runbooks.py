"""Failure kinds of the seventh breadth batch (eval/realworld/cases-aj.jsonl) route to runbooks
written or extended for them from their libraries' documentation (issue 16).

Each kind is one any project can hit: Triton refusing a TensorRT plan whose batch dimension is
fixed or whose optimization profile is smaller than `max_batch_size`, Keras 3 warning about
`input_shape=` on a layer, JAX's buffer donation meeting `jax_debug_nans`' re-run, TensorRT
loading an engine built on another GPU model, and onnxruntime-web / onnxruntime-node reporting
a feed keyed by the wrong name. The wordings are the libraries' own messages in other spellings
than any one case (other models, layers, shapes and names); each is sent as a bare incident
through lexical retrieval and the offline provider: the runbook comes first and its action
names the documented fix. Errors of other kinds must not match the new signals.
"""

from __future__ import annotations

from tests.support.vendor_checks import Wording, batch_tests

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "triton-tensorrt-engine-max-batch",
        "none (model load error)",
        "E1102 10:01:12.554031 1 model_lifecycle.cc:630] failed to load 'yolo_trt' version 1:"
        " Invalid argument: unexpected configuration maximum batch size 32 for"
        " 'yolo_trt_0_gpu1', model maximum is 1 as model does not contain an implicit batch"
        " dimension nor the explicit batch-dimension of 'images' is a wildcard.",
        ("dynamic",),
    ),
    Wording(
        "triton-tensorrt-engine-max-batch",
        "none (model load error)",
        "UNAVAILABLE: Internal: autofill failed for model 'bert_plan': configuration specified"
        " max-batch 64 but TensorRT engine only supports max-batch 8",
        ("max_batch_size",),
    ),
    Wording(
        "keras3-input-shape-argument-warning",
        "UserWarning",
        "/usr/lib/python3/dist-packages/keras/src/layers/rnn/lstm.py:148: UserWarning: Do not"
        " pass an `input_shape`/`input_dim` argument to a layer. When using Sequential models,"
        " prefer using an `Input(shape)` object as the first layer in the model instead.",
        ("keras.Input(shape=",),
    ),
    Wording(
        "jax-donated-buffer-deleted",
        "none (runtime error log)",
        "Invalid nan value encountered in the output of a C++-jit/pmap function. Calling the"
        " de-optimized version.\nExecution of replica 0 failed: INVALID_ARGUMENT: Invalid buffer"
        " passed to Execute() as argument 2 to replica 0: INVALID_ARGUMENT: Donation requested"
        " for invalid buffer",
        ("donate_argnums",),
    ),
    Wording(
        "jax-donated-buffer-deleted",
        "UserWarning",
        "UserWarning: Some donated buffers were not usable: ShapedArray(float32[64,128]),"
        " ShapedArray(float32[128]).",
        ("Ignore",),
    ),
    Wording(
        "version-tensorrt-engine-mismatch",
        "none (warning)",
        "[12/01/2024-10:14:55] [TRT] [W] Using an engine plan file across different models of"
        " devices is not recommended and is likely to affect performance or even cause errors.",
        ("Rebuild the engine",),
    ),
    Wording(
        "onnxruntime-feed-name-invalid",
        "Error",
        "Error: input 'pixel_values' is missing in 'feeds'.",
        ("inputNames",),
    ),
)

#: slug -> errors of other kinds that the new signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "triton-tensorrt-engine-max-batch": (
        "tritonclient.utils.InferenceServerException: [400] inference request batch-size must"
        " be <= 8 for 'resnet'",
        "model 'm', tensor 'x': the model expects 4 dimensions (shape [-1,3,224,224]) but the"
        " model configuration specifies 3 dimensions",
    ),
    "keras3-input-shape-argument-warning": (
        "ValueError: Unrecognized keyword arguments passed to LSTM: {'batch_input_shape':"
        " (1, 1, 7)}",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)
