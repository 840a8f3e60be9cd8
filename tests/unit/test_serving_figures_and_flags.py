"""Serving engines' own figures and flags in the suggestion (issue 16 items 2 and 4).

- vLLM's KV-cache limit is given with the incident's own token count.
- A serving engine out of memory after loading its weights gets eager mode when it was
  capturing CUDA graphs, and not when another process fills the GPU.
- Flags of the launch command in the logs (``vllm serve m --enforce-eager``) are already set:
  a step that turns one on again is not the action; flags quoted as advice are not set.
"""

from __future__ import annotations

import pytest

from rca.suggestion.incident_setting import options_in_commands
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import draft as answer
from tests.support.evidence import message_context


@pytest.mark.parametrize(
    ("message", "tokens"),
    [
        (
            "ValueError: The model's max seq len (32768) is larger than the maximum number of"
            " tokens that can be stored in KV cache (7344). Try increasing"
            " `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
            "7344",
        ),
        (
            "ValueError: The model's max seq len (4096) is larger than the maximum number of"
            " tokens that can be stored in KV cache (2176).",
            "2176",
        ),
    ],
)
def test_the_kv_cache_limit_is_given_with_the_incidents_own_token_count(
    message: str, tokens: str
) -> None:
    action = (
        OfflineProvider()
        .suggest(message_context(message, ("vllm-max-model-len-kv-cache", 0.9)))
        .action
    )
    assert "max-model-len" in action
    assert f"{tokens} here" in action


def test_a_kv_cache_message_without_the_token_count_gets_no_number() -> None:
    message = (
        "ValueError: To serve at least one request with the models's max seq len (32768),"
        " (4.00 GiB KV cache is needed, which is larger than the available KV cache memory"
        " (2.50 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`."
    )
    action = (
        OfflineProvider()
        .suggest(message_context(message, ("vllm-max-model-len-kv-cache", 0.9)))
        .action
    )
    assert "max-model-len" in action
    assert "here)" not in action and "{" not in action


_ENGINE_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB. GPU 0 has a"
    " total capacity of 22.36 GiB of which 120.88 MiB is free. Of the allocated memory 20.10"
    " GiB is allocated by PyTorch, and 310.00 MiB is reserved by PyTorch but unallocated."
)


@pytest.mark.parametrize(
    "capture",
    [
        "INFO 12-20 20:25:49 model_runner.py:1413] Capturing cudagraphs for decoding.",
        "INFO 12-18 21:44:36 model_runner.py:394] Capturing the model for CUDA graphs. This may"
        " lead to unexpected consequences if the model is not static.",
        "Capturing CUDA graph shapes:  40%|████      | 27/67",
    ],
)
def test_an_engine_oom_during_graph_capture_is_answered_with_eager_mode(capture: str) -> None:
    ctx = message_context(
        _ENGINE_OOM,
        ("vllm-engine-cuda-oom", 0.9),
        ("cuda-oom-model-too-large", 0.8),
        logs=("INFO worker.py:241] model weights take 7.51GiB", capture),
    )
    assert "enforce-eager" in OfflineProvider().suggest(ctx).action


def test_an_engine_oom_while_another_process_fills_the_gpu_is_not_told_eager_mode() -> None:
    message = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a"
        " total capacity of 44.53 GiB of which 448.00 KiB is free. Process 3663367 has 40.28 GiB"
        " memory in use. Of the allocated memory 1.20 GiB is allocated by PyTorch, and 20.00 MiB"
        " is reserved by PyTorch but unallocated."
    )
    ctx = message_context(message, ("vllm-engine-cuda-oom", 0.9), logs=("vllm serve org/model",))
    assert "memory-held-elsewhere" in read_premises(ctx).facts
    action = OfflineProvider().suggest(ctx).action
    assert "CUDA_VISIBLE_DEVICES" in action
    eager = answer(
        "Start the engine in eager mode, or lower `--gpu-memory-utilization`, so CUDA graph"
        " capture has headroom.",
        "vllm-engine-cuda-oom",
    )
    assert not validate(eager, ctx).premises_ok


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        ("vllm serve org/model --enforce-eager --gpu-memory-utilization 0.95", "enforce_eager", ""),
        (
            "$ python -m vllm.entrypoints.openai.api_server --model m --trust-remote-code",
            "trust_remote_code",
            "",
        ),
        (
            "CUDA_VISIBLE_DEVICES=0,1 vllm serve m --tensor-parallel-size 2",
            "tensor_parallel_size",
            "2",
        ),
        (
            "python3 -m sglang.launch_server --model-path m --mem-fraction-static 0.8",
            "mem_fraction_static",
            "0.8",
        ),
        (
            "text-generation-launcher --model-id m --max-input-length 4095",
            "max_input_length",
            "4095",
        ),
    ],
)
def test_flags_of_the_launch_command_in_the_logs_are_already_set(
    command: str, option: str, value: str
) -> None:
    assert options_in_commands([command]).get(option) == value


@pytest.mark.parametrize(
    "line",
    [
        "INFO 02-17 03:15:22 model_runner.py:625] Capturing the model for CUDA graphs. To run the"
        " model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI.",
        "You can pass --enforce-eager to avoid this",
        "ERROR: pass --trust-remote-code to load this model",
        "trtexec --onnx=model.onnx --fp16",  # a bare switch named by a plain word: not read
    ],
)
def test_flags_quoted_as_advice_or_plain_switches_are_not_read_as_set(line: str) -> None:
    assert not {"enforce_eager", "trust_remote_code", "fp16"} & set(options_in_commands([line]))


def test_eager_mode_is_not_suggested_to_an_engine_launched_in_eager_mode() -> None:
    message = (
        "ValueError: No available memory for the cache blocks. Try increasing"
        " `gpu_memory_utilization` when initializing the engine."
    )
    for command in (
        "vllm serve org/model --enforce-eager --gpu-memory-utilization 0.5",
        "python -m vllm.entrypoints.openai.api_server --model org/model --enforce-eager",
    ):
        ctx = message_context(message, ("vllm-no-memory-cache-blocks", 0.9), logs=(command,))
        assert "enforce_eager" in read_premises(ctx).options_set
        assert "enforce" not in OfflineProvider().suggest(ctx).action
        again = answer(
            "Start the engine with `enforce_eager=True` (`--enforce-eager`).",
            "vllm-no-memory-cache-blocks",
        )
        assert not validate(again, ctx).premises_ok
    # The same message with the engine's own advice in its log keeps eager mode open.
    advice = (
        "INFO model_runner.py:1413] Capturing cudagraphs for decoding. To run the model in eager"
        " mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI."
    )
    ctx = message_context(message, ("vllm-no-memory-cache-blocks", 0.9), logs=(advice,))
    assert "enforce_eager" not in read_premises(ctx).options_set
    eager = answer(
        "Start the engine with `enforce_eager=True` (`--enforce-eager`).",
        "vllm-no-memory-cache-blocks",
    )
    assert validate(eager, ctx).premises_ok
