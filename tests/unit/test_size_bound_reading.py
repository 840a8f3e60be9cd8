"""The size-bound reader (:mod:`rca.suggestion.size_limits`) and the answer's moves
(:mod:`rca.suggestion.size_moves`) on their own: each tool's wording is read as a bound of its
kind, a limit whose fix is raising it is no bound, what an answer reports, keeps or turns down
is no move, and both stay bounded and linear on adversarial text (issue 16).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rca.suggestion.size_limits import read_size_bounds
from rca.suggestion.size_moves import size_harms
from tests.support.linear_time import assert_linear
from tests.support.size_messages import (
    HF_MAXLEN,
    LLAMACPP,
    ONNX_2GB,
    TRT_PROFILE,
    VLLM_BATCHED,
    VLLM_REQUEST,
)


def _bounds(text: str) -> list[tuple[str, float, float | None, str, bool]]:
    return [(b.quantity, b.limit, b.requested, b.kind, b.minimum) for b in read_size_bounds([text])]


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        (
            "User-specified max_model_len (65536) is greater than the derived max_model_len"
            " (max_position_embeddings=32768 or model_max_length=None in model's config.json).",
            ("context", 32768, 65536, "model", False),
        ),
        (
            "User-specified max_model_len (8192) is greater than the derived max_model_len"
            " (None=2048.0 or model_max_length=None in model's config.json).",
            ("context", 2048, 8192, "model", False),
        ),
        (
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given:"
            " 3000 `inputs` tokens and 2000 `max_new_tokens`",
            ("completion", 1096, 2000, "request", False),
        ),
        (
            "Input validation error: `max_new_tokens` must be <= 1024. Given: 2048",
            ("completion", 1024, 2048, "request", False),
        ),
        (
            "n_ctx_per_seq (4096) < n_ctx_train (131072) -- the full capacity of the model will"
            " not be utilized",
            ("context", 131072, 4096, "model", False),
        ),
        (
            "the slot context (8192) exceeds the training context of the model (4096) - capping",
            ("context", 4096, 8192, "model", False),
        ),
        (
            "To serve at least one request with the models's max seq len (131072), (16.00 GiB KV"
            " cache is needed, which is larger than the available KV cache memory (9.39 GiB)."
            " Based on the available memory, the estimated maximum model length is 76912.",
            ("context", 76912, 131072, "memory", False),
        ),
        (
            "inference request batch-size must be <= 8 for 'resnet50'",
            ("batch", 8, None, "server", False),
        ),
        (
            "configuration specified max-batch 128 but TensorRT engine only supports max-batch 1",
            ("batch", 1, 128, "model", False),
        ),
        (
            "ValueError: LoRA rank 64 is greater than max_lora_rank 16.",
            ("lora_rank", 64, 16, "server", True),
        ),
        (ONNX_2GB, ("file_size", 2 * 2**30, None, "hard", False)),
        (
            "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum"
            " context length is 4096 tokens and your request has 1000 input tokens",
            ("completion", 3096, 4000, "request", False),
        ),
        (
            "This model's maximum context length is 4096 tokens. However, you requested 4000"
            " output tokens and your prompt contains at least 1000 input tokens",
            ("completion", 3096, 4000, "request", False),
        ),
        (
            "The decoder prompt (length 9000) is longer than the maximum model length of 8192.",
            ("context", 9000, 8192, "server", True),
        ),
        (
            "model expected the shape of dimension 0 to be between 1 and 1 but received 32"
            " for yolov5x6_tensorrt",
            ("batch", 1, 32, "model", False),
        ),
    ],
)
def test_each_tools_wording_is_read_as_a_bound_of_its_kind(text: str, bound: tuple[Any]) -> None:
    assert _bounds(text) == [bound]


@pytest.mark.parametrize(
    "text",
    [
        "DataLoader worker (pid 7) is killed by signal: Bus error. It is possible that"
        " dataloader's workers are out of shared memory. Please try to raise your shared memory"
        " limit.",
        "Token id 32000 is out of vocabulary",
        HF_MAXLEN,
        "the request exceeds the available context size, try increasing it",
    ],
)
def test_a_limit_whose_fix_is_raising_it_is_no_bound(text: str) -> None:
    assert _bounds(text) == []


def test_a_server_setting_may_be_raised_up_to_the_models_stated_maximum() -> None:
    bounds = read_size_bounds(["n_ctx_per_seq (4096) < n_ctx_train (131072)"])
    assert size_harms("Start llama-server with -c 32768.", bounds) == []
    assert size_harms("Raise n_ctx.", bounds) == []
    assert size_harms("Set n_ctx to 262144.", bounds)


def test_a_prompt_longer_than_the_servers_length_rules_out_lowering_it() -> None:
    bounds = read_size_bounds(
        ["The decoder prompt (length 9000) is longer than the maximum model length of 8192."]
    )
    assert size_harms("Set --max-model-len 16384.", bounds) == []
    assert size_harms("Lower --max-model-len to 4096.", bounds)
    assert size_harms("Reduce max_model_len.", bounds)


def test_units_apart_and_thousands_separators_are_read_as_the_number() -> None:
    onnx = read_size_bounds([ONNX_2GB])
    assert size_harms("Increase the protobuf limit to 4 GB.", onnx)
    kv = read_size_bounds(
        [
            "The model's max seq len (131072) is larger than the maximum number of tokens that"
            " can be stored in KV cache (30000)."
        ]
    )
    assert size_harms("Set max_model_len to 65,536.", kv)
    assert size_harms("Set max_model_len to 16,384.", kv) == []


def test_a_request_raised_past_a_servers_cap_is_harm_and_the_cap_raised_is_not() -> None:
    triton = read_size_bounds(["inference request batch-size must be <= 8 for 'resnet50'"])
    assert size_harms("Increase the batch size sent by the client.", triton)
    assert size_harms("Send batches of 16 images.", triton)
    assert size_harms("Raise max_batch_size in config.pbtxt.", triton) == []
    assert size_harms("Set max_batch_size: 32 in config.pbtxt.", triton) == []


def test_a_rebuild_moves_an_engines_batch_not_a_models_completion_limit() -> None:
    engine = read_size_bounds(
        ["configuration specified max-batch 64 but TensorRT engine only supports max-batch 16"]
    )
    assert size_harms("Rebuild the engine with --max_batch_size 64.", engine) == []
    completion = read_size_bounds(
        ["max_tokens is too large: 10000. This model supports at most 4096 completion tokens"]
    )
    assert size_harms("Rebuild the client image and set max_tokens=8192.", completion)


def test_more_memory_lets_a_memory_bound_move() -> None:
    kv = read_size_bounds(
        [
            "The model's max seq len (131072) is larger than the maximum number of tokens that"
            " can be stored in KV cache (30000)."
        ]
    )
    assert size_harms("Move to a larger GPU and keep max_model_len at 131,072.", kv) == []
    assert size_harms("Load with --quantization awq and --max-model-len 65536.", kv) == []


def test_protobufs_own_log_of_the_2gb_limit_is_the_hard_bound() -> None:
    """libprotobuf's ``message_lite.cc`` says "exceeded"; onnx says "exceeds"."""
    logged = "onnx.ModelProto exceeded maximum protobuf size of 2GB: 2192699607"
    assert _bounds(logged) == [("file_size", 2 * 2**30, None, "hard", False)]
    bounds = read_size_bounds([logged])
    assert size_harms("Raise the protobuf limit to 4GB with SetTotalBytesLimit.", bounds)
    assert size_harms("Export the model as a single 2.2 GB .onnx file.", bounds)
    assert size_harms("Split the 2.2 GB .onnx file into external data files.", bounds) == []


def test_a_paired_setting_only_named_excuses_no_completion_past_the_rest() -> None:
    bounds = read_size_bounds([VLLM_REQUEST])
    assert size_harms("Set max_tokens=4000 to use the full context.", bounds)
    assert size_harms("Set max_tokens=4000 and --max-model-len 8192.", bounds) == []


def test_digit_groups_and_counts_in_words_are_the_number() -> None:
    kv = read_size_bounds(
        [
            "The model's max seq len (32768) is larger than the maximum number of tokens that"
            " can be stored in KV cache (7344)."
        ]
    )
    assert size_harms("Pass max_model_len=32_768 to LLM(...).", kv)
    assert size_harms("Set the context length to sixty-four thousand tokens.", kv)
    assert size_harms("Set max_model_len=7_000.", kv) == []
    assert size_harms("Set the context length to seven thousand tokens.", kv) == []


def test_a_kept_value_past_an_engines_or_memorys_bound_keeps_the_failure() -> None:
    engine = read_size_bounds(
        ["configuration specified max-batch 128 but TensorRT engine only supports max-batch 1"]
    )
    assert size_harms("Keep max_batch_size 128 in config.pbtxt.", engine)
    assert size_harms("Keep max_batch_size 128 and rebuild the engine.", engine) == []
    kv = read_size_bounds(
        [
            "The model's max seq len (32768) is larger than the maximum number of tokens that"
            " can be stored in KV cache (7344)."
        ]
    )
    assert size_harms("Keep gpu_memory_utilization at 0.9 and set max_model_len 32768.", kv)


def test_what_the_answer_reports_keeps_or_turns_down_is_no_move() -> None:
    bounds = read_size_bounds([VLLM_REQUEST])
    assert size_harms("Reduce max_tokens; the completion used 4000 tokens.", bounds) == []
    assert size_harms("Do not raise max_tokens to 8192; lower it to 2000.", bounds) == []
    assert size_harms("Shorten the messages and keep max_tokens 4000.", bounds) == []


_PIECES = st.sampled_from(
    [
        "max_model_len ",
        "(9999) ",
        "n_ctx_train (1",
        "is greater than max_lora_rank ",
        "raise ",
        "-c ",
        "9x9x9",
        "=",
        "batch size ",
        "`",
        "1.",
        "model with ",
    ]
)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_PIECES, max_size=400).map("".join))
def test_readers_stay_bounded_on_any_text(text: str) -> None:
    bounds = read_size_bounds([text] * 3)
    assert len(bounds) <= 12
    assert len(size_harms(text, bounds)) <= len(bounds)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "piece",
    ["max_model_len (9", "n_ctx_per_seq (1", "raise max_tokens to 9 ", "-c 1x", "=" * 3, "(1,"],
)
def test_readers_are_linear_in_adversarial_length(piece: str) -> None:
    bounds = read_size_bounds([LLAMACPP, VLLM_BATCHED, TRT_PROFILE])

    def read(n: int) -> object:
        text = piece * n
        return read_size_bounds([text]), size_harms(text, bounds)

    assert_linear(read, small=10, large=120)  # under both readers' cuts (2,000 characters)
