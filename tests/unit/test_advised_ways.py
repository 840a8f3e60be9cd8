"""An answer that moves an option against the way the message advises fails (re-review
finding 5).

vLLM names both the problem and the way out: "Try increasing `gpu_memory_utilization` or
decreasing `max_model_len`". "Increase `--max-model-len` to 65536" asks for even more KV
cache than the 7344 tokens that fit; the options are compared whatever their spelling
(``--max-model-len`` is ``max_model_len``). Answers that follow the advice still pass.
"""

from __future__ import annotations

import pytest

from rca.suggestion.advised_ways import advised_ways, moves_against_advice
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

KV = (
    "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens"
    " that can be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or"
    " decreasing `max_model_len` when initializing the engine."
)
SLUG = "vllm-max-model-len-kv-cache"


def _premises_ok(action: str) -> bool:
    ctx = message_context(KV, (SLUG, 0.9))
    return validate(draft(action, SLUG, "The KV cache holds 7344 tokens."), ctx).premises_ok


@pytest.mark.parametrize(
    "action",
    [
        "Increase `--max-model-len` to 65536.",
        "Raise `max_model_len` to 65536 so the whole context fits.",
        "Lower `--gpu-memory-utilization` to 0.5 to leave room for other processes.",
        "Keep the defaults and double `max-model-len`.",
    ],
)
def test_moving_an_option_against_the_message_advice_fails(action: str) -> None:
    assert not _premises_ok(action)


@pytest.mark.parametrize(
    "action",
    [
        "Lower `--max-model-len` to 7344.",
        "Reduce `max_model_len` to 7344 so the context fits in the KV cache.",
        "Increase `--gpu-memory-utilization` to 0.95.",
        "Pass `--max-model-len 7344` to `vllm serve`.",
        "Lower `--max-model-len` to 7344 instead of increasing `max_model_len`.",
    ],
)
def test_following_the_advice_still_passes(action: str) -> None:
    assert _premises_ok(action)


def test_the_advised_way_is_read_per_option_in_any_spelling() -> None:
    assert advised_ways([KV]) == {"gpu_memory_utilization": "up", "max_model_len": "down"}
    assert moves_against_advice("Raise `--max-model-len`.", {"max_model_len": "down"})
    assert not moves_against_advice("Do not raise `max_model_len`.", {"max_model_len": "down"})
    assert_linear(lambda n: advised_ways(["try increasing the value of " * n]))
