"""Failure kinds of the ninth breadth batch (eval/realworld/cases-am.jsonl) route to the steps
written for them from their libraries' documentation (issue 16).

cases-am found ten kinds with no runbook: a TensorFlow graph using ops of a package the
loading process never imported, tf.data batching elements of different shapes, jax.grad
through a while loop, jax.pure_callback result shapes, NaN after an ONNX float16 conversion,
TensorRT 10's named tensor addresses, a TensorRT build asking for more workspace than the GPU
has, Triton's model control modes, the Triton-language interpreter switched on after import,
and a bundled ptxas too old for the GPU. One existing step gained the error's own wording as
its condition (inference tensors saved for backward). Each wording is the library's message
as other code prints it, sent as a bare incident through lexical retrieval and the offline
provider: the runbook comes first and its action names the documented fix. Messages of other
kinds with similar words must not match the new signals.
"""

from __future__ import annotations

from tests.support.vendor_checks import Wording, batch_tests
from tests.support.vendor_routing import route_message

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "tf-op-type-not-registered",
        "NotFoundError",
        "tensorflow.python.framework.errors_impl.NotFoundError: Op type not registered"
        " 'RegexSplitWithOffsets' in binary running on worker-0. Make sure the Op and Kernel"
        " are registered in the binary running in this process.",
        ("tensorflow-text", "import tensorflow_text"),
    ),
    Wording(
        "tf-data-batch-different-shapes",
        "InvalidArgumentError",
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot batch tensors"
        " with different shapes in component 0. First element had shape [480,640,3] and"
        " element 1 had shape [512,512,3]. [Op:IteratorGetNext]",
        ("tf.image.resize",),
    ),
    Wording(
        "jax-grad-while-loop-reverse-mode",
        "ValueError",
        "ValueError: Reverse-mode differentiation does not work for lax.while_loop or"
        " lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using"
        " fori_loop with static start/stop.",
        ("lax.scan", "static"),
    ),
    Wording(
        "jax-pure-callback-result-shape",
        "TypeError",
        '  File "/usr/lib/python3.11/site-packages/jax/_src/callback.py", line 261, in'
        " pure_callback\nTypeError: Shapes must be 1D sequences of concrete values of integer"
        " type, got ((64,), (64, 64)).",
        ("ShapeDtypeStruct", "one per returned array"),
    ),
    Wording(
        "onnx-float16-conversion-nan",
        "RuntimeWarning",
        "After float16.convert_float_to_float16(model) the session returns nan for every"
        " output; the float32 model is correct.",
        ("op_block_list", "keep_io_types"),
    ),
    Wording(
        "tensorrt-tensor-address-not-set",
        "RuntimeError",
        "[TRT] [E] IExecutionContext::enqueueV3: Error Code 3: API Usage Error (Parameter"
        " check failed, condition: mContext.profileObliviousBindings.at(profileObliviousIndex)"
        " != nullptr. Address is not set for input tensor images. Call setInputTensorAddress"
        " or setTensorAddress before enqueue/execute.)",
        ("set_tensor_address",),
    ),
    Wording(
        "tensorrt-build-gpu-memory-exceeded",
        "RuntimeError",
        "[TRT] [W] Requested amount of GPU memory (8589934592 bytes) could not be allocated."
        " There may not be enough free memory for allocation to succeed.",
        ("workspace pool below the GPU's free memory",),
    ),
    Wording(
        "triton-model-control-mode",
        "InferenceServerException",
        "tritonclient.utils.InferenceServerException: [400] explicit model load / unload is"
        " not allowed if polling is enabled",
        ("--model-control-mode=explicit",),
    ),
    Wording(
        "triton-interpreter-env-before-import",
        "RuntimeError",
        "triton.runtime.errors.InterpreterError: RuntimeError(\"Cannot call @triton.jit'd"
        ' outside of the scope of a kernel")',
        ("TRITON_INTERPRET=1", "before importing"),
    ),
    Wording(
        "triton-ptxas-gpu-arch-unsupported",
        "PTXASError",
        "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
        "`ptxas` stderr:\nptxas fatal   : Value 'sm_120a' is not defined for option"
        " 'gpu-name'",
        ("TRITON_PTXAS_PATH",),
    ),
    Wording(
        "inplace-leaf-variable",
        "RuntimeError",
        "RuntimeError: Inference tensors cannot be saved for backward. To work around you can"
        " make a clone to get a normal tensor and use it in autograd.",
        ("inference_mode", "no_grad"),
    ),
)

#: slug -> errors of other kinds that the runbook's signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "tf-op-type-not-registered": (
        'NotFoundError: Could not find registered platform with name: "cuda". Available'
        " platform names are: []",
    ),
    "tf-data-batch-different-shapes": (
        "ValueError: Shapes (None, 1) and (None, 10) are incompatible",
    ),
    "jax-grad-while-loop-reverse-mode": (
        "jax.errors.TracerIntegerConversionError: The __index__() method was called on"
        " traced array with shape int32[]",
    ),
    "jax-pure-callback-result-shape": (
        "TypeError: Argument 'x' of type <class 'str'> is not a valid JAX type",
    ),
    "onnx-float16-conversion-nan": (
        "RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.",
    ),
    "tensorrt-tensor-address-not-set": (
        "[TRT] [E] 3: [executionContext.cpp::setInputShape::2013] Error Code 3: API Usage"
        " Error (Parameter check failed at: runtime/api/executionContext.cpp::setInputShape,"
        " condition: engineDims.d[i] == dims.d[i].)",
    ),
    "tensorrt-build-gpu-memory-exceeded": (
        "[TRT] [W] Some tactics do not have sufficient workspace memory to run. Increasing"
        " workspace size will enable more tactics, please check verbose output for requested"
        " sizes.",
    ),
    "triton-model-control-mode": (
        "tritonclient.utils.InferenceServerException: [StatusCode.UNAVAILABLE] Request for"
        " unknown model: 'resnet' is not found",
    ),
    "triton-interpreter-env-before-import": (
        "triton.compiler.errors.CompilationError: at 10:4: ValueError(\"arange's range must"
        ' be a power of 2")',
    ),
    "triton-ptxas-gpu-arch-unsupported": (
        "W external/xla/xla/service/gpu/nvptx_compiler.cc:760] The NVIDIA driver's CUDA"
        " version is 12.2 which is older than the ptxas CUDA version (12.4.131).",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)


def test_the_jit_shape_error_without_a_callback_is_not_a_callback_error():
    """The pure_callback signal needs the callback named: the same words from `jnp.zeros(n)`
    under `jit` (a traced size) are the tracer-concretization kind."""
    found, _, _ = route_message(
        "TypeError",
        "TypeError: Shapes must be 1D sequences of concrete values of integer type, got"
        " (Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>,).",
    )
    assert found[0].slug != "jax-pure-callback-result-shape", [r.slug for r in found]
