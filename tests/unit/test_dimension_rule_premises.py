"""The tensor-dimension rule accepts the sizes the incident's premises derive and reads no
setting as a dimension (issue 16, LLM-answer review finding 9).

On a folded input "(1600x1 and 100x256)" the validator's own re-ask complaint says "flatten
or reshape it to (16, 100)", and the dimension rule then rejected the answer that did so
("not in it: 16"): the re-ask loop could not finish. And "Decrease `max_model_len` to 4096"
was rejected as naming a tensor dimension the shapes lack, though 4096 is a setting.
"""

from __future__ import annotations

import pytest

from rca.suggestion.checks.dimensions import named_dims
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear
from tests.support.scripted_llm import scripted_llm

_LINEAR = "matmul-shape-mismatch-linear"
_FOLDED = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1600x1 and 100x256)"
#: rb001 and rag012 (dev): the message's numbers are token counts, not tensor shapes.
_KV_CACHE = (
    "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens"
    " that can be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or"
    " decreasing `max_model_len` when initializing the engine."
)
_CONTEXT = (
    "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"This model's"
    " maximum context length is 6048 tokens. However, you requested 6616 tokens (568 in the"
    " messages, 6048 in the completion). Please reduce the length of the messages or"
    " completion.\", 'type': 'BadRequestError', 'param': None, 'code': 400}"
)


def _dimension_complaints(action: str, message: str, runbook: str) -> list[str]:
    ctx = message_context(message, (runbook, 0.9))
    complaints = validate(draft(action, runbook, "The shapes differ."), ctx).complaints
    return [c for c in complaints if c.startswith("name tensor dimensions")]


def test_an_llm_that_follows_the_reshape_complaint_is_kept(httpserver):
    """Against a local OpenAI-protocol server: the resize is re-asked with the complaint that
    names (16, 100), and the answer that reshapes to exactly that is kept."""
    answers = [
        {
            "action": "Set `in_features=1` on the Linear layer.",
            "reason": "The input has one feature per row.",
            "runbook": _LINEAR,
            "confidence": 0.8,
        },
        {
            "action": "Reshape the input to (16, 100) keeping the batch axis.",
            "reason": "Each sample's 100 values are spread over the rows of the input.",
            "runbook": _LINEAR,
            "confidence": 0.7,
        },
    ]
    provider, requests = scripted_llm(httpserver, *answers)
    outcome = write_suggestion(message_context(_FOLDED, (_LINEAR, 0.9)), provider)
    asked_again = "\n".join(m["content"] for m in requests[-1]["messages"])
    assert "(16, 100)" in asked_again
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert outcome.draft.action == answers[1]["action"] and outcome.validation.ok


@pytest.mark.parametrize(
    "action",
    [
        "Reshape the input to (16, 100) keeping the batch axis.",
        "Flatten the input to `(16, 100)` with `x.reshape(16, 100)`.",
    ],
)
def test_the_derived_batch_of_a_folded_input_is_a_known_dimension(action):
    assert _dimension_complaints(action, _FOLDED, _LINEAR) == []


@pytest.mark.parametrize(
    "action", ["Reshape the input to (17, 100).", "Set `hidden_size=4000` on the model."]
)
def test_sizes_neither_shown_nor_derived_are_still_unknown(action):
    assert _dimension_complaints(action, _FOLDED, _LINEAR)


@pytest.mark.parametrize(
    ("action", "message", "runbook"),
    [
        ("Decrease `max_model_len` to 4096 so it fits the KV cache.", _KV_CACHE,
         "vllm-max-model-len-kv-cache"),
        ("Pass `--max-model-len 4096` when starting the server.", _KV_CACHE,
         "vllm-max-model-len-kv-cache"),
        ("Lower `max_tokens` to 5000 so prompt plus completion fits.", _CONTEXT,
         "seq-too-long-position-embeddings"),
    ],
)  # fmt: skip
def test_a_settings_value_is_not_a_tensor_dimension(action, message, runbook):
    assert _dimension_complaints(action, message, runbook) == []


def test_shape_options_keep_their_values_as_dimensions():
    assert named_dims("Set `in_features=4096` and `hidden_size` to 512.") == {4096, 512}
    # A length the run is given is a setting (size-settings.toml), not a tensor size.
    assert named_dims("Set `in_features=4096` and `max_seq_len` to 512.") == {4096}
    assert named_dims("Set `max_tokens=5000` and `--max-model-len 4096`.") == set()


def test_reading_option_values_is_linear():
    assert_linear(lambda size: named_dims("a_b" * size + "-c=1 " * size), 100, 4000)
