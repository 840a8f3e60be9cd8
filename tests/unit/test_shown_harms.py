"""Suggestions that go against what the incident shows, beyond options and package versions.

Issue 16's third judging found three kinds of harmful suggestion that passed validation: a
setting moved past the limit the message names (an IR version above the runtime's maximum, a
dtype the GPU cannot run), a key prefix stripped though the checkpoint's keys already lack it
(or added though they carry it), and a layer resized for tensors that are empty because ZeRO-3
saved them partitioned. Each is read from the incident's own text, and validation rejects such
a suggestion from any author, offline or LLM; the look-alikes where the obvious step is right
(the prefix is on the checkpoint's side, a real head size mismatch) keep it.
"""

from __future__ import annotations

import json

import pytest

from rca.suggestion.empty_tensors import empty_tensor_facts
from rca.suggestion.key_prefix_sides import read_shown_keys
from rca.suggestion.named_limits import read_named_limits, read_ruled_out_values
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider, OpenAIProvider
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from tests.support.evidence import chat_completion, draft, message_context
from tests.support.scripted_llm import scripted_llm

IR = (
    "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Load"
    " model from encoder.onnx failed:/onnxruntime_src/onnxruntime/core/graph/model.cc:179"
    " onnxruntime::Model::Model(onnx::ModelProto&&, const PathString&, ...) Unsupported model"
    " IR version: 10, max supported IR version: 9"
)
OPSET_FLOOR = (
    "ONNX Runtime only *guarantees* support for models stamped with opset version 7 or above"
    " for opset domain 'ai.onnx'. Please upgrade your model to opset 7 or higher. For now,"
    " this opset 3 model may run depending upon legacy support of some older opset version"
    " operators."
)
PICKLE = "ValueError: unsupported pickle protocol: 5"
BF16 = (
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0."
    " Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly"
    " setting the`dtype` flag in CLI, for example: --dtype=half."
)
WRAPPED_MODEL = (
    "RuntimeError: Error(s) in loading state_dict for DataParallel:\n"
    '\tMissing key(s) in state_dict: "module.encoders.0.conv.weight",'
    ' "module.encoders.0.conv.bias", "module.head.weight".\n'
    '\tUnexpected key(s) in state_dict: "encoders.0.conv.weight", "encoders.0.conv.bias",'
    ' "head.weight".'
)
WRAPPED_FILE = (
    "RuntimeError: Error(s) in loading state_dict for VisionTransformer:\n"
    '\tMissing key(s) in state_dict: "pos_embed", "patch_embed.proj.weight",'
    ' "blocks.0.norm1.weight".\n'
    '\tUnexpected key(s) in state_dict: "module.pos_embed", "module.patch_embed.proj.weight",'
    ' "module.blocks.0.norm1.weight".'
)
ADAPTER = (
    "UserWarning: Found missing adapter keys while loading the checkpoint: "
    "['base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight', "
    "'base_model.model.model.layers.0.self_attn.q_proj.lora_B.default.weight']"
)
ZERO3 = (
    "RuntimeError: Error(s) in loading state_dict for MistralForCausalLM:\n"
    "\tsize mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([0])"
    " from checkpoint, the shape in current model is torch.Size([32002, 4096]).\n"
    "\tYou may consider adding `ignore_mismatched_sizes=True` in the model `from_pretrained`"
    " method."
)
HEAD = (
    "RuntimeError: Error(s) in loading state_dict for DistilBertForTokenClassification:\n"
    "\tsize mismatch for classifier.weight: copying a param with shape torch.Size([9, 768])"
    " from checkpoint, the shape in current model is torch.Size([5, 768]).\n"
    "\tsize mismatch for classifier.bias: copying a param with shape torch.Size([9]) from"
    " checkpoint, the shape in current model is torch.Size([5]).\n"
    "\tYou may consider adding `ignore_mismatched_sizes=True` in the model `from_pretrained`"
    " method."
)


def _complaints(message: str, action: str, runbook: str = "onnx-model-load-invalid") -> list[str]:
    ctx = message_context(message, (runbook, 0.9))
    check = validate(draft(action, runbook), ctx)
    assert check.premises_ok == (not check.complaints) or not check.ok
    return [] if check.premises_ok else check.complaints


def test_limits_and_ruled_out_values_are_read_from_the_message():
    (ir,) = read_named_limits([IR])
    assert (ir.rejected, ir.maximum, ir.minimum) == (10, 9, None)
    (floor,) = read_named_limits([OPSET_FLOOR])
    assert floor.minimum == 7 and floor.maximum is None
    (protocol,) = read_named_limits([PICKLE])
    assert protocol.rejected == 5 and protocol.maximum is None
    (bf16,) = read_ruled_out_values([BF16])
    assert bf16.value.lower() == "bfloat16" and "7.5" in bf16.why
    assert (bf16.measure, bf16.need) == (("compute", "capability"), 8.0)
    assert (
        read_ruled_out_values(["Bfloat16 is only supported on ... at least 8.0. Your A100 has 8.0"])
        == ()
    )
    assert read_named_limits(["RuntimeError: CUDA error: out of memory"]) == ()


@pytest.mark.parametrize(
    ("message", "action", "harmful"),
    [
        (IR, "Stamp the model with IR version 11 before loading it.", True),
        (IR, "Raise the model's IR version and save it again.", True),
        (IR, "Set `model.ir_version = 9` with onnx and save the model again.", False),
        (IR, "Upgrade onnxruntime to a release that supports IR version 10.", False),
        (OPSET_FLOOR, "Convert the model to opset 5 with the version converter.", True),
        (OPSET_FLOOR, "Convert the model to opset 13 with `onnx.version_converter`.", False),
        (PICKLE, "Save the file again with pickle protocol 5.", True),
        (PICKLE, "Re-save the file with `protocol=4` from the newer Python.", False),
        (PICKLE, "Run under Python 3.8 or newer, which reads pickle protocol 5.", False),
        (BF16, "Load the model in bfloat16 with `--dtype bfloat16`.", True),
        (BF16, "Set `bf16=True` in the training arguments.", True),
        (BF16, "Pass `--dtype half` instead of bfloat16.", False),
        (BF16, "Use float16: bfloat16 needs compute capability 8.0.", False),
        # bfloat16 on hardware the message says supports it is the fix, not a use below it
        (BF16, "Run on a GPU of compute capability 8.0 or newer to serve in bfloat16.", False),
        (BF16, "Serve in bfloat16 on a GPU with compute capability 9.0 (H100).", False),
        (BF16, "Set `dtype=bfloat16` and run on a GPU with compute capability 7.5.", True),
        (BF16, "Set `dtype=bfloat16` in the engine arguments.", True),
        (BF16, "Load in bfloat16 on a GPU of 8.0 GB or more.", True),
    ],
)
def test_a_move_against_a_named_limit_fails_validation(message, action, harmful):
    complaints = _complaints(message, action)
    assert bool(complaints) == harmful, complaints
    if harmful:
        assert any("the message says" in complaint for complaint in complaints)


def test_the_keys_say_which_side_carries_the_prefix():
    keys = read_shown_keys([WRAPPED_MODEL])
    assert keys.checkpoint[0] == "encoders.0.conv.weight"
    assert keys.model[0] == "module.encoders.0.conv.weight"
    adapter = read_shown_keys([ADAPTER])
    assert adapter.model and adapter.model[0].startswith("base_model.model.")
    used = read_shown_keys(
        [
            "Some weights of the model checkpoint at bert-base-uncased were not used when"
            " initializing BertModel: ['cls.predictions.bias', 'cls.seq_relationship.weight']"
        ]
    )
    assert used.checkpoint == ("cls.predictions.bias", "cls.seq_relationship.weight")


@pytest.mark.parametrize(
    ("message", "action", "harmful"),
    [
        (WRAPPED_MODEL, "Strip the `module.` prefix from the checkpoint's keys.", True),
        (WRAPPED_MODEL, 'Load with `{k.removeprefix("module."): v for k, v in sd.items()}`.', True),
        (WRAPPED_MODEL, "Add the `module.` prefix to every checkpoint key.", False),
        (WRAPPED_FILE, "Strip the `module.` prefix from the checkpoint's keys.", False),
        (WRAPPED_FILE, "Add the `module.` prefix to every checkpoint key.", True),
        (ADAPTER, "Add the `base_model.model.` prefix to the adapter's keys.", False),
        (ADAPTER, "Strip the `base_model.model.` prefix from the adapter's keys.", True),
    ],
)
def test_a_prefix_change_the_keys_already_show_fails_validation(message, action, harmful):
    complaints = _complaints(message, action, "checkpoint-keys-module-prefix")
    assert bool(complaints) == harmful, complaints


def test_the_side_carrying_the_prefix_is_a_fact():
    assert "state-dict-prefix-on-model-side" in read_premises(message_context(WRAPPED_MODEL)).facts
    file_facts = read_premises(message_context(WRAPPED_FILE)).facts
    assert "state-dict-prefix-on-checkpoint-side" in file_facts
    assert "state-dict-prefix-on-model-side" not in file_facts


def test_the_offline_step_for_a_wrapped_model_is_not_stripping_the_file():
    ctx = message_context(WRAPPED_MODEL, ("checkpoint-keys-module-prefix", 0.9))
    suggestion = OfflineProvider().suggest(ctx)
    assert "removeprefix" not in suggestion.action and "strip" not in suggestion.action.lower()
    assert "before wrapping" in suggestion.action
    assert validate(suggestion, ctx).ok
    file_ctx = message_context(WRAPPED_FILE, ("checkpoint-keys-module-prefix", 0.9))
    assert "prefix" in OfflineProvider().suggest(file_ctx).action.lower()


def test_empty_tensors_are_read_from_either_side_and_printed_shapes():
    assert "checkpoint-tensors-empty" in read_premises(message_context(ZERO3)).facts
    model_side = (
        "size mismatch for shared.weight: copying a param with shape torch.Size([250112, 512])"
        " from checkpoint, the shape in current model is torch.Size([0])."
    )
    assert "model-tensors-empty" in read_premises(message_context(model_side)).facts
    printed = "transformer.word_embeddings.weight : torch.Size([0])"
    assert empty_tensor_facts(printed, []) == {"checkpoint-tensors-empty"}
    assert not read_premises(message_context(HEAD)).facts & {
        "checkpoint-tensors-empty",
        "model-tensors-empty",
    }


@pytest.mark.parametrize(
    ("message", "action", "harmful"),
    [
        (ZERO3, "Pass `ignore_mismatched_sizes=True` to `from_pretrained`.", True),
        (ZERO3, "Resize the token embeddings to the tokenizer's length.", True),
        (ZERO3, "Convert the ZeRO-3 shards to one state dict with `zero_to_fp32.py`.", False),
        (
            HEAD,
            "Pass `ignore_mismatched_sizes=True` with `num_labels=5` to `from_pretrained`.",
            False,
        ),
    ],
)
def test_resizing_for_empty_tensors_fails_validation(message, action, harmful):
    complaints = _complaints(message, action, "checkpoint-size-mismatch-head")
    assert bool(complaints) == harmful, complaints


def test_the_offline_action_for_empty_tensors_does_not_resize():
    ctx = message_context(
        ZERO3, ("checkpoint-size-mismatch-head", 0.9), ("zero3-checkpoint-consolidation", 0.8)
    )
    suggestion = OfflineProvider().suggest(ctx)
    assert "ignore_mismatched_sizes" not in suggestion.action
    assert validate(suggestion, ctx).ok


def test_the_premises_name_the_limits_and_key_sides_for_the_prompt():
    lines = read_premises(message_context(IR)).as_lines()
    assert any(line.startswith("named limit: IR version") for line in lines)
    lines = read_premises(message_context(WRAPPED_MODEL)).as_lines()
    assert "the model's keys shown start like: module.encoders.0.conv.weight" in lines
    lines = read_premises(message_context(ZERO3)).as_lines()
    assert any(line.startswith("checkpoint-tensors-empty") for line in lines)


_RESIZE = {
    "action": "Pass `ignore_mismatched_sizes=True` to `from_pretrained`.",
    "reason": "The message suggests it.",
    "runbook": "checkpoint-size-mismatch-head",
    "confidence": 0.7,
}
_GATHER = {
    "action": (
        "Convert the ZeRO-3 shards into one state dict with"
        " `get_fp32_state_dict_from_zero_checkpoint` and load that."
    ),
    "reason": "The saved tensors are empty partitions; the full weights are in the shards.",
    "runbook": "zero3-checkpoint-consolidation",
    "confidence": 0.7,
}


def test_an_llm_answer_against_the_shown_shapes_is_reasked_and_never_kept(httpserver):
    """The LLM path gets the same premise: the prompt says the checkpoint's tensors are empty,
    an answer that resizes is re-asked with the complaint, and the corrected one is kept."""
    answers = (_RESIZE, _GATHER)
    provider, requests = scripted_llm(httpserver, *answers)
    ctx = message_context(
        ZERO3, ("checkpoint-size-mismatch-head", 0.9), ("zero3-checkpoint-consolidation", 0.8)
    )
    outcome = write_suggestion(ctx, provider)
    user = "\n".join(m["content"] for m in requests[0]["messages"] if m["role"] == "user")
    assert "checkpoint-tensors-empty" in user
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert any("empty" in complaint for complaint in outcome.attempts[0]["complaints"])
    assert outcome.draft.action == _GATHER["action"] and outcome.validation.ok


def test_an_llm_answer_past_a_named_limit_is_never_kept(httpserver):
    """An LLM that keeps answering past the named maximum is never shown as a trusted fix."""
    bad = {
        "action": "Re-export the model with IR version 11.",
        "reason": "Newer is better.",
        "runbook": "onnx-model-load-invalid",
        "confidence": 0.8,
    }
    body = json.dumps(chat_completion(json.dumps(bad)))
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_data(
        body, content_type="application/json"
    )
    provider = OpenAIProvider("sk-test", httpserver.url_for("/v1"), "test-llm", 5, 0)
    outcome = write_suggestion(message_context(IR, ("onnx-model-load-invalid", 0.9)), provider)
    assert all(not attempt["ok"] for attempt in outcome.attempts[:2])
    assert outcome.draft.action != bad["action"] or not outcome.validation.ok
