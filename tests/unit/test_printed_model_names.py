"""Module names an answer gives must be the printed model's own (issue 16, LoRA targets).

A review probe gave ChatGLM's printed model (its attention is one ``query_key_value`` module)
with PEFT's "Target modules ['q_proj', 'v_proj'] not found", and answers targeting BERT's
``query``/``value`` or MPT's ``Wqkv`` passed: only a step restated by the answer was held to
the printed names. PEFT would fail again the same way, so any answer whose module names are
none of the printed model's fails; one naming the model's own projection passes.
"""

from __future__ import annotations

import pytest

from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context

_PEFT = ("peft-target-modules-not-found", 0.9)
_MESSAGE = (
    "ValueError: Target modules ['q_proj', 'v_proj'] not found in the base model. Please check"
    " the target modules and try again."
)
_CHATGLM_PRINT = (
    "ChatGLMForConditionalGeneration(",
    "  (transformer): ChatGLMModel(",
    "    (encoder): GLMTransformer(",
    "      (layers): ModuleList(",
    "        (0-27): 28 x GLMBlock(",
    "          (self_attention): SelfAttention(",
    "            (query_key_value): Linear(in_features=4096, out_features=4608, bias=True)",
    "            (dense): Linear(in_features=4096, out_features=4096, bias=False)",
)


@pytest.mark.parametrize(
    "action",
    [
        'Set `target_modules=["query", "key", "value"]` in `LoraConfig`.',
        'Use `LoraConfig(target_modules=["query", "value"])`.',
        'Set `target_modules=["Wqkv", "out_proj"]` in `LoraConfig`.',
        'Change `target_modules` to `["query", "value"]`.',
    ],
)
def test_names_the_printed_model_lacks_fail(action: str) -> None:
    check = validate(draft(action, _PEFT[0]), message_context(_MESSAGE, _PEFT, logs=_CHATGLM_PRINT))
    assert not check.premises_ok
    assert any("among the model's modules shown" in c for c in check.complaints), check.complaints


@pytest.mark.parametrize(
    "action",
    [
        'Set `target_modules=["query_key_value"]` in `LoraConfig`.',
        'Set `target_modules=["query_key_value", "dense"]` to adapt attention and its output.',
        "Pass `--lora_target query_key_value` instead of `q_proj,v_proj`.",
    ],
)
def test_the_printed_models_own_names_pass(action: str) -> None:
    check = validate(draft(action, _PEFT[0]), message_context(_MESSAGE, _PEFT, logs=_CHATGLM_PRINT))
    assert check.premises_ok, check.complaints


def test_with_no_printed_model_other_names_are_not_judged_by_it() -> None:
    ctx = message_context(_MESSAGE, _PEFT)
    action = 'Set `target_modules=["query", "value"]` for BERT-style attention.'
    assert not any("modules shown" in c for c in validate(draft(action, _PEFT[0]), ctx).complaints)
