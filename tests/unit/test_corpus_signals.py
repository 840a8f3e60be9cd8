"""How general the signal regexes are.

The corpus is graded on unseen incidents of the same kind as the dev set, so these tests
measure the signals on the dev cases and on a hand-written list of canonical error
messages that are not in the dev set."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rca.corpus.files import (
    Runbook,
    match_signals,
)

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"

#: Canonical error lines (not taken from the dev set) and the class they belong to.
CANONICAL_ERRORS: tuple[tuple[str, str], ...] = (
    ("cuda_oom", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
    ("cuda_oom", "RuntimeError: CUDA error: out of memory"),
    ("host_oom", "Killed"),
    ("host_oom", "RuntimeError: DataLoader worker (pid 77) is killed by signal: Killed."),
    ("host_oom", "Last State: Terminated, Reason: OOMKilled, Exit Code: 137"),
    ("matmul_shape_mismatch", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x512)"),
    (
        "conv_channel_mismatch",
        "expected input[4, 4, 64, 64] to have 3 channels, but got 4 channels",
    ),
    ("checkpoint_shape_mismatch", "size mismatch for fc.weight: copying a param with shape [10]"),
    ("checkpoint_missing_keys", 'Unexpected key(s) in state_dict: "module.conv.weight".'),
    (
        "checkpoint_missing_keys",
        "Some weights of BertModel were not initialized from the model checkpoint",
    ),
    ("device_mismatch", "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor)"),
    (
        "device_mismatch",
        "module must have its parameters and buffers on device cuda:0 (device_ids[0])",
    ),
    ("dtype_mismatch", "RuntimeError: expected scalar type Half but found Float"),
    (
        "dtype_mismatch",
        "Expected tensor for argument #1 'indices' to have one of the following scalar",
    ),
    ("dtype_mismatch", "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'"),
    ("nan_loss", "ValueError: loss is nan"),
    ("nan_loss", "RuntimeError: Function 'LogBackward0' returned nan values in its 0th output."),
    ("seq_too_long", "Token indices sequence length is longer than the specified maximum sequence"),
    ("seq_too_long", "ValueError: This model's maximum context length is 4096 tokens."),
    ("embedding_index_out_of_range", "RuntimeError: CUDA error: device-side assert triggered"),
    ("embedding_index_out_of_range", "IndexError: index out of range in self"),
    ("cuda_arch_or_driver", "CUDA error: no kernel image is available for execution on the device"),
    ("cuda_arch_or_driver", "AssertionError: Torch not compiled with CUDA enabled"),
    (
        "nccl_distributed",
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9",
    ),
    ("nccl_distributed", "DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275"),
    (
        "dataloader_worker",
        "RuntimeError: DataLoader worker (pid 123) is killed by signal: Bus error.",
    ),
    ("dataloader_worker", "AttributeError: Can't pickle local object 'build.<locals>.<lambda>'"),
    (
        "inplace_autograd",
        "modified by an inplace operation: [torch.FloatTensor [3]] is at version 1",
    ),
    (
        "inplace_autograd",
        "a leaf Variable that requires grad is being used in an in-place operation.",
    ),
    ("backward_twice", "RuntimeError: Trying to backward through the graph a second time"),
    (
        "model_file_not_found",
        "OSError: ./out does not appear to have a file named pytorch_model.bin",
    ),
    ("model_file_not_found", "_pickle.UnpicklingError: invalid load key, '<'."),
    (
        "model_file_not_found",
        "PytorchStreamReader failed reading zip archive: failed finding central",
    ),
    ("tf_input_shape", 'Input 0 of layer "dense" is incompatible with the layer: expected shape='),
    ("tf_input_shape", "ValueError: Shapes (None, 1) and (None, 5) are incompatible"),
    (
        "onnx_export_or_runtime",
        "INVALID_ARGUMENT : Unexpected input data type. Actual: (tensor(double))",
    ),
    (
        "onnx_export_or_runtime",
        "Specified provider 'CUDAExecutionProvider' is not in available provider",
    ),
    (
        "kv_cache_capacity",
        "larger than the maximum number of tokens that can be stored in KV cache",
    ),
    ("quantization_error", "RuntimeError: CUDA Setup failed despite GPU being available."),
    (
        "quantization_error",
        "Found modules on cpu/disk. Using Exllama backend requires all the modules",
    ),
    ("grpc_or_timeout", "_InactiveRpcError: status = StatusCode.DEADLINE_EXCEEDED"),
    ("grpc_or_timeout", "grpc: received message larger than max (5000000 vs. 4194304)"),
    (
        "version_incompatibility",
        "ImportError: flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9Set",
    ),
    ("version_incompatibility", "Serialization assertion failed. Version tag does not match."),
    (
        "version_incompatibility",
        "TypeError: __init__() got an unexpected keyword argument 'use_auth_token'",
    ),
    ("mixed_precision_overflow", "ValueError: Attempting to unscale FP16 gradients."),
    (
        "mixed_precision_overflow",
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536",
    ),
    ("serving", 'Liveness probe failed: Get "http://10.1.2.3:8000/health": connection refused'),
    ("serving", "sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached"),
    ("serving", "GOAWAY received with error code ENHANCE_YOUR_CALM and debug data too_many_pings"),
)


def _dev_cases() -> list[dict[str, Any]]:
    with DEV_CASES.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _hit_rate(runbooks: list[Runbook], items: list[tuple[str, str]]) -> tuple[float, list[str]]:
    misses = []
    for category, text in items:
        if not any(rb.failure_class == category and match_signals(rb, text) for rb in runbooks):
            misses.append(f"{category}: {text[:80]}")
    return 1 - len(misses) / len(items), misses


def test_signals_cover_dev_cases(runbooks: list[Runbook]) -> None:
    cases = _dev_cases()
    assert cases
    items = [(c["category"], f"{c['exception_type']}: {c['message']}") for c in cases]
    rate, misses = _hit_rate(runbooks, items)
    print(f"\ndev-case signal hit rate: {rate:.2%} ({len(items) - len(misses)}/{len(items)})")
    assert rate >= 0.8, misses


def test_signals_cover_canonical_errors(runbooks: list[Runbook]) -> None:
    rate, misses = _hit_rate(runbooks, list(CANONICAL_ERRORS))
    print(f"\ncanonical-error signal hit rate: {rate:.2%}")
    assert rate >= 0.9, misses


def test_no_single_signal_is_tuned_to_one_dev_case(runbooks: list[Runbook]) -> None:
    """Signals must not embed dev-case specifics (ids, paths, exact sizes)."""
    for rb in runbooks:
        for pattern in rb.signals:
            assert not re.search(r"\d{5,}|site-packages|/home/", pattern), (rb.slug, pattern)
