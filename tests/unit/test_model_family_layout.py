"""A named model shows its attention layout as a printed one does (issue 16, LoRA targets).

After 47c1866 an answer naming a fused projection with no printed model failed validation as
a guess: right for a model nothing names, wrong for LLaMA-Factory's ``--model_name_or_path
/models/chatglm3-6b`` (hiyouga/LlamaFactory#750, #1785), where PEFT's own mapping of model
types to default LoRA targets says ChatGLM's projection is ``query_key_value``. A review probe
found 11 right answers rejected that way; these are its wordings.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rca.suggestion.model_family import named_layout, named_models, named_types
from rca.suggestion.premises import read_premises
from rca.suggestion.projection_layout import layout_facts, layout_values
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

_PEFT = ("peft-target-modules-not-found", 0.9)
_MESSAGE = (
    "ValueError: Target modules ['q_proj', 'v_proj'] not found in the base model. Please check"
    " the target modules and try again."
)
_CHATGLM = (
    "--model_name_or_path /models/chatglm3-6b --finetuning_type lora --lora_target q_proj,v_proj",
)


@pytest.mark.parametrize(
    ("text", "layout"),
    [
        ("--model_name_or_path /chatglm2-6b/model", "fused"),
        ('AutoModelForCausalLM.from_pretrained("EleutherAI/gpt-neox-20b")', "fused"),
        ("--model tiiuae/falcon-7b", "fused"),
        ("--model_name_or_path bigscience/bloom-560m", "fused"),
        ("--model meta-llama/Llama-2-7b-hf", "separate"),
        ('model_id = "google/flan-t5-xl"', "separate"),
        ("--model facebook/opt-1.3b", "separate"),
        # both layouts named: nothing said
        ("--model_name_or_path /opt/models/chatglm2-6b", ""),
        # no model argument: a path alone names no model
        ("loading /srv/chatglm2-6b/config.json", ""),
        # a type's last part must end the name's part or be followed by a version only
        ("--model EleutherAI/gpt-neox-20b", "fused"),
        ("--model acme/neox-foo", ""),
    ],
)
def test_the_layout_of_a_named_model_type(text: str, layout: str) -> None:
    assert named_layout([text]) == layout, named_types([text])


@pytest.mark.parametrize(
    "action",
    [
        "Set `target_modules=['query_key_value']` in `LoraConfig`, ChatGLM's fused attention"
        " projection.",
        "Pass `--lora_target query_key_value` instead of `q_proj,v_proj`.",
        'Use `LoraConfig(target_modules=["query_key_value"])` since ChatGLM has no `q_proj` or'
        " `v_proj`.",
        'Set `target_modules=["query_key_value"]` instead of `["q_proj", "v_proj"]`.',
        "Replace `q_proj,v_proj` with `query_key_value` in `--lora_target`.",
    ],
)
def test_a_fused_answer_for_a_named_fused_model_passes(action: str) -> None:
    ctx = message_context(_MESSAGE, _PEFT, logs=_CHATGLM)
    assert "model-attention-fused" in read_premises(ctx).facts
    check = validate(draft(action, _PEFT[0]), ctx)
    assert check.premises_ok, check.complaints


def test_with_no_model_named_the_fused_answer_is_still_a_guess() -> None:
    ctx = message_context(_MESSAGE, _PEFT, logs=("--finetuning_type lora",))
    action = "Pass `--lora_target query_key_value` instead of `q_proj,v_proj`."
    check = validate(draft(action, _PEFT[0]), ctx)
    assert not check.premises_ok
    assert any("attention-layout-guessed" in c for c in check.complaints)


def test_the_offline_answer_names_the_named_models_projection() -> None:
    ctx = message_context(_MESSAGE, _PEFT, logs=_CHATGLM)
    suggestion = OfflineProvider().suggest(ctx)
    assert "`query_key_value`" in suggestion.action, suggestion.action
    assert validate(suggestion, ctx).ok
    assert layout_values(list(_CHATGLM))["shown-fused-projection"] == "`query_key_value`"


def test_a_named_separate_model_does_not_get_the_fused_step() -> None:
    ctx = message_context(_MESSAGE, _PEFT, logs=("--model_name_or_path bert-base-uncased",))
    assert "model-attention-fused" not in read_premises(ctx).facts
    assert "query_key_value" not in OfflineProvider().suggest(ctx).action


def test_a_printed_model_wins_over_a_named_one() -> None:
    printed = [
        "BloomForCausalLM(",
        "  (self_attention): BloomAttention(",
        "    (query_key_value): Linear(in_features=64, out_features=192)",
        "    (dense): Linear(in_features=64, out_features=64)",
    ]
    texts = ["--model meta-llama/Llama-2-7b-hf", *printed]
    assert layout_facts(texts) == {"model-attention-fused"}


@given(st.text(max_size=300))
def test_arbitrary_text_never_raises(text: str) -> None:
    named_models([text])
    named_layout([text, "--model " + text])


def test_long_input_is_read_in_linear_time() -> None:
    assert_linear(lambda n: named_layout(["--model " + "a-" * n + " from_pretrained('" + "x/" * n]))
