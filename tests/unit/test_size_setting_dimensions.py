"""A token count, length or batch given to a setting is no tensor dimension, and a number the
incident states or the answer computes from it is no made-up one (re-review of tonight's
validation: every right answer on rag012 was rejected).

"Keep max_tokens at 2000." was rejected with "not in it: 568, 2000": the rule read the value
of ``max_tokens`` as a tensor size and the reason's "2000 + 568" too, though 568 is the
message's own prompt length. The settings are ``rca/knowledge/size-settings.toml``'s (their
values are weighed by the size-bound checks); a size shown nowhere still fails.
"""

from __future__ import annotations

import pytest

from rca.suggestion.checks.dimensions import named_dims
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

_RAG012 = (
    "This model's maximum context length is 6048 tokens. However, you requested 6616 tokens"
    " (568 in the messages, 6048 in the completion). Please reduce the length of the messages"
    " or completion."
)
_RJ013 = (
    "ValueError: The model's max seq len (60000) is larger than the maximum number of tokens"
    " that can be stored in KV cache (58384). Try increasing `gpu_memory_utilization` or"
    " decreasing `max_model_len` when initializing the engine."
)
_C049 = (
    "RuntimeError: The size of tensor a (532) must match the size of tensor b (512) at"
    " non-singleton dimension 1"
)
_C023 = (
    "RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n\tsize mismatch for"
    " model.embed_tokens.weight: copying a param with shape torch.Size([32008, 64]) from"
    " checkpoint, the shape in current model is torch.Size([32000, 64])."
)
_MATMUL = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)"


def _dimension_complaints(message: str, action: str, reason: str) -> list[str]:
    ctx = message_context(message, ("seq-too-long-position-embeddings", 0.9))
    answer = draft(action, "seq-too-long-position-embeddings", reason)
    return [c for c in validate(answer, ctx).complaints if c.startswith("name tensor dim")]


@pytest.mark.parametrize(
    ("message", "action", "reason"),
    [
        (_RAG012, "Keep max_tokens at 2000.", "2000 + 568 fits in the 6048-token context."),
        (_RAG012, "Set max_tokens=5000 in the chat completion call.", "5000 + 568 = 5568 < 6048."),
        (_RAG012, "Reduce the completion budget (max_tokens) to 5400 tokens.", "Fits."),
        (
            _RAG012,
            "Lower max_tokens to 4096 in the client request so prompt plus completion fits.",
            "568 + 6048 exceeds the 6048-token context.",
        ),
        (_RAG012, "Reduce max_tokens from 6048 to 4000 so the 568-token prompt fits.", "Fits."),
        (
            _RAG012,
            "Cap max_tokens at the context length minus the prompt length (6048 - 568 = 5480).",
            "Fits.",
        ),
        (_RAG012, "Pass `max_new_tokens` of 3000 to generate().", "3000 + 568 < 6048."),
        (
            _RJ013,
            "Start the server with --max-model-len 56000.",
            "56000 fits under the 58384-token KV cache.",
        ),
        (_RJ013, "Set the context length to 50000 when starting vLLM.", "Below 58384."),
        (_C049, "Set model.max_seq_length to 256 and use a batch size of 16.", "Truncate shorter."),
        (_C049, "Set tokenizer.model_max_length = 128 and truncate.", "The input is 20 too long."),
        (
            _C023,
            "Resize the base model's embeddings to 32008 with model.resize_token_embeddings(32008)"
            " before PeftModel.from_pretrained.",
            "Tokenizer added 8 tokens.",
        ),
    ],
)
def test_size_settings_and_the_incidents_numbers_are_no_made_up_dimension(
    message: str, action: str, reason: str
) -> None:
    assert _dimension_complaints(message, action, reason) == []


@pytest.mark.parametrize(
    ("message", "action", "reason"),
    [
        (_RAG012, "Reshape the input to (4, 300).", "Fits."),
        (_RAG012, "Keep max_tokens at 2000.", "The prompt is 700 tokens and 2000 + 700 fits."),
        (_RAG012, "Truncate the prompt.", "6048 - 568 = 5000 tokens are left for the answer."),
        (_C023, "Resize the embeddings to 32100.", "The tokenizer has 32100 tokens."),
        (_MATMUL, "Reshape the input to (4, 300) with max_tokens=300.", "Fits."),
    ],
)
def test_a_size_shown_nowhere_still_fails(message: str, action: str, reason: str) -> None:
    assert _dimension_complaints(message, action, reason)


def test_a_length_setting_value_is_no_dimension_but_a_shape_beside_it_is() -> None:
    assert named_dims("Set max_seq_length to 256 and reshape to (8, 300).") == {8, 300}
    assert named_dims("Pass --max-model-len 56000 and -c 4096.") == set()


def test_reading_size_setting_values_is_linear() -> None:
    assert_linear(lambda size: named_dims("max_tokens at 1 " * size + "(4, 300) " * size))


def test_non_ascii_text_is_read_too() -> None:
    assert named_dims("Keep max_tokens at 2000 — the prompt’s 568 tokens fit.") == {568}
    action, reason = "Keep max_tokens at 2000 → fits.", "2000 + 568 − 0."
    assert _dimension_complaints(_RAG012, action, reason) == []


def test_numbers_of_bare_log_lines_count_as_stated() -> None:
    """Log entries arrive as dicts or as bare lines (SDKs, the layer-origin tests): both are
    read, and neither breaks validation (a bare line crashed it once)."""
    from rca.suggestion.checks.stated_numbers import incident_numbers

    assert {568, 6048} <= incident_numbers("", ["prompt has 568 tokens", {"message": "cap 6048"}])
