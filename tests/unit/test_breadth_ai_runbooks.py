"""Failure kinds of the sixth breadth batch (eval/realworld/cases-ai.jsonl) route to runbooks
written for them from their libraries' documentation (issue 16).

Each kind is one any project can hit: TensorRT's `trtexec` installed but not on `PATH`, a
Keras optimizer created with TensorFlow 2.10 arguments (`decay`, `lr`), a LoRA target whose
layer class the installed peft cannot wrap, and DeepSpeed refusing a config value of the wrong
type. The wordings are the libraries' own messages in other spellings than any one case (other
shells, optimizers, layers, fields and values); each is sent as a bare incident through lexical
retrieval and the offline provider: the runbook comes first and its action names the
documented fix. Errors of other kinds must not match the new signals.
"""

from __future__ import annotations

from tests.support.vendor_checks import Wording, batch_tests

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "tensorrt-trtexec-not-on-path",
        "none (shell error)",
        "/bin/sh: 1: trtexec: not found",
        ("PATH",),
    ),
    Wording(
        "keras-optimizer-legacy-arguments",
        "ValueError",
        "ValueError: decay is deprecated in the new Keras optimizer, pleasecheck the docstring"
        " for valid arguments, or use the legacy optimizer, e.g.,"
        " tf.keras.optimizers.legacy.RMSprop.",
        ("optimizers.legacy",),
    ),
    Wording(
        "peft-target-module-type-unsupported",
        "ValueError",
        "ValueError: Target module MultiheadAttention((out_proj): NonDynamicallyQuantizableLinear("
        "in_features=768, out_features=768, bias=True)) is not supported. Currently, only the"
        " following modules are supported: `torch.nn.Linear`, `torch.nn.Embedding`,"
        " `torch.nn.Conv2d`, `transformers.pytorch_utils.Conv1D`.",
        ("peft",),
    ),
    Wording(
        "deepspeed-config-validation-error",
        "ValidationError",
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig"
        "\nreduce_bucket_size\n  Input should be a valid integer, got a number with a fractional"
        " part [type=int_from_float, input_value=3774873.6, input_type=float]",
        ("whole number",),
    ),
)

#: slug -> errors of other kinds that the new runbooks' signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "tensorrt-trtexec-not-on-path": ("bash: nvcc: command not found",),
    "keras-optimizer-legacy-arguments": (
        "TypeError: __init__() got an unexpected keyword argument 'lr'",
    ),
    "peft-target-module-type-unsupported": (
        "ValueError: Target modules ['q_proj', 'v_proj'] not found in the base model. Please"
        " check the target modules and try again.",
    ),
    "deepspeed-config-validation-error": (
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
        "max_model_len\n  Input should be a valid integer, got a number with a fractional part",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)
