"""Signals, tokenisation, BM25 scoring, fusion and eval metrics, on real error texts (pure)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.derive import derive
from ingest.parsing.logs import parse_logs
from rca.corpus.files import bundled_runbook_dir, load_directory, match_signals
from rca.evaluation.metrics import CaseResult, summarise
from rca.retrieval import fusion
from rca.retrieval.signals import build_signals, describe_shape_diff, normalise_message
from rca.retrieval.tokens import tokenize

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


def _cases() -> dict[str, dict]:
    with DEV_CASES.open(encoding="utf-8") as handle:
        return {c["id"]: c for c in map(json.loads, handle) if c}


CASES = _cases()


def _incident(case: dict, **extra) -> SimpleNamespace:
    derived = derive(
        {
            "error_type": case["exception_type"],
            "message": case["message"],
            "stacktrace": case["traceback"],
            "logs": case["logs"],
        }
    )
    return SimpleNamespace(
        error_type=derived.error_type,
        message=derived.message,
        exceptions=derived.exceptions,
        logs=derived.logs,
        shape_diff=derived.shape_diff,
        inference_context=extra.get("inference_context", {}),
    )


# --------------------------------------------------------------------------- tokenisation


def test_identifiers_are_kept_whole_and_split() -> None:
    tokens = tokenize("Error(s) in loading state_dict for LlamaForCausalLM")
    assert {"state_dict", "state", "dict", "llamaforcausallm", "llama", "causal"} <= set(tokens)
    assert "in" not in tokens and "for" not in tokens


def test_camel_case_acronyms_split_at_the_word_boundary() -> None:
    tokens = tokenize("Input type (CUDAFloatTensor) and weight type (CUDAHalfTensor)")
    assert {"cudafloattensor", "cuda", "float", "half", "tensor"} <= set(tokens)


def test_dotted_names_keep_domain_words_and_drop_volatile_numbers() -> None:
    tokens = tokenize("torch.cuda.OutOfMemoryError NCCL fp16 bf16 0xdeadbeef 12345 cuda:0")
    assert {"torch.cuda.outofmemoryerror", "torch", "cuda", "memory", "nccl", "fp16"} <= set(tokens)
    assert not any(t[0].isdigit() or "deadbeef" in t for t in tokens)


def test_plurals_fold_so_channels_meets_channel() -> None:
    assert tokenize("3 channels")[-1] == tokenize("input channel")[-1] == "channel"


# --------------------------------------------------------------------------- signals


def test_qualified_and_short_error_types() -> None:
    signals = build_signals(_incident(CASES["c007"]))
    assert signals.error_type == "torch.OutOfMemoryError"
    assert signals.error_type_short == "OutOfMemoryError"
    # the message repeated the type: it is not repeated again
    assert signals.message == "CUDA out of memory."


def test_message_is_normalised_but_signal_text_stays_raw() -> None:
    signals = build_signals(_incident(CASES["c001"]))
    assert "39.59" not in signals.message_normalised
    assert "MiB" not in signals.message_normalised
    assert "CUDA out of memory" in signals.message_normalised
    assert signals.signal_text().startswith(
        "RuntimeError: CUDA out of memory. Tried to allocate 16"
    )


def test_paths_are_removed_from_import_errors() -> None:
    signals = build_signals(_incident(CASES["c107"]))
    assert "/home/" not in signals.message_normalised
    assert "Qwen3VLForConditionalGeneration" in signals.message_normalised


def test_in_app_frames_and_library_packages_from_a_real_traceback() -> None:
    signals = build_signals(_incident(CASES["c047"]))
    assert signals.frames[0] == "modeling_soft_masked_bert.py:forward"
    assert signals.libraries[:2] == ["transformers", "torch"]
    assert "in transformers, torch" in signals.embedding_text()


def test_shape_diff_in_words() -> None:
    signals = build_signals(_incident(CASES["c014"]))
    assert signals.shapes[0].startswith("linear weight expects 768 input features, got 4096")
    conv = build_signals(_incident(CASES["c020"]))
    assert conv.shapes == ["conv weight expects 3 input channels, got 1"]


@pytest.mark.parametrize(
    ("diff", "words"),
    [
        (
            {
                "op": "load_state_dict",
                "tensor": "fc.weight",
                "expected": [10, 512],
                "actual": [1000, 512],
            },
            "checkpoint tensor fc.weight has shape [1000, 512] but the model expects [10, 512]",
        ),
        (
            {"op": "kv_cache", "tensor": "max_model_len", "expected": [20224], "actual": [32768]},
            "max_model_len 32768 exceeds the 20224 tokens",
        ),
        (
            {"op": "input", "tensor": "stem_conv", "expected": [None] * 4, "actual": [32, 834, 3]},
            "expects input of rank 4, got rank 3",
        ),
    ],
)
def test_describe_shape_diff(diff: dict, words: str) -> None:
    assert words in describe_shape_diff(diff)


def test_key_log_fields_keep_errors_and_codes_not_info() -> None:
    logs = parse_logs(
        [
            {"level": "info", "message": "loaded 12 shards"},
            {
                "level": "error",
                "message": "NCCL watchdog timeout after 1800000 ms",
                "error_code": "NCCL_TIMEOUT",
            },
            "2024-05-01 12:00:00 WARNING gpu_memory_utilization=0.95 too high",
        ]
    )
    incident = SimpleNamespace(error_type="RuntimeError", message="boom", logs=logs)
    signals = build_signals(incident)
    assert signals.error_codes == ["NCCL_TIMEOUT"]
    assert any("NCCL watchdog timeout" in m for m in signals.log_messages)
    assert not any("shards" in m for m in signals.log_messages)
    assert "nccl_timeout" in signals.bm25_tokens()


def test_inference_context_is_kept_and_model_id_stays_out_of_bm25() -> None:
    context = {"model_id": "acme/llama-7b", "quantization": "awq", "device": "cuda:0"}
    signals = build_signals(_incident(CASES["c096"], inference_context=context))
    assert signals.context == {
        "model_id": "acme/llama-7b",
        "quantization": "awq",
        "device": "cuda:0",
    }
    tokens = signals.bm25_tokens()
    assert "awq" in tokens and "acme" not in tokens
    assert signals.as_dict()["context"]["quantization"] == "awq"


def test_dict_incidents_work_like_objects() -> None:
    signals = build_signals({"error_type": "KeyError", "message": 'unexpected key "module.x"'})
    assert signals.error_type == "KeyError" and "module.x" in signals.message


def test_signal_text_feeds_the_runbook_regexes() -> None:
    runbooks = {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}
    signals = build_signals(_incident(CASES["c092"]))
    assert match_signals(runbooks["vllm-no-memory-cache-blocks"], signals.signal_text())


@settings(max_examples=60, deadline=None)
@given(
    error_type=st.text(max_size=40),
    message=st.text(max_size=300),
    logs=st.lists(
        st.one_of(st.text(max_size=80), st.dictionaries(st.text(max_size=8), st.text(max_size=20))),
        max_size=4,
    ),
)
def test_any_text_in_no_exception_out(error_type: str, message: str, logs: list) -> None:
    derived = derive({"error_type": error_type, "message": message, "logs": logs})
    signals = build_signals(derived.__dict__ | {"inference_context": {}})
    signals.bm25_tokens()
    signals.embedding_text()
    signals.signal_text()
    json.dumps(signals.as_dict())


def test_normalise_message_is_stable_across_occurrences() -> None:
    a = normalise_message("DataLoader worker (pid 15927) exited unexpectedly at 0x7f3a2b")
    b = normalise_message("DataLoader worker (pid 811) exited unexpectedly at 0x55aa01")
    assert a == b


# --------------------------------------------------------------------------- BM25, fusion, metrics


def test_bm25_index_scores_exactly_like_rank_bm25() -> None:
    from rank_bm25 import BM25Okapi

    from rca.retrieval.bm25 import BM25Index

    docs = [tokenize(rb.body) for rb in load_directory(bundled_runbook_dir())]
    query = build_signals(_incident(CASES["c063"])).bm25_tokens()
    np.testing.assert_allclose(BM25Index(docs).scores(query), BM25Okapi(docs).get_scores(query))


def test_weighted_fusion_lets_the_signal_prior_lift_a_close_second() -> None:
    bm25 = np.array([10.0, 9.0, 0.0])
    cosine = np.array([0.60, 0.58, 0.20])
    signal = np.array([0.0, 1.0, 0.0])
    assert int(np.argmax(fusion.weighted(bm25, cosine, signal))) == 1
    assert int(np.argmax(fusion.weighted(bm25, cosine, np.zeros(3)))) == 0


def test_rrf_ignores_unscored_items_and_needs_no_normalisation() -> None:
    bm25 = np.array([0.0, 5.0, 1.0])
    cosine = np.array([np.nan, 0.3, 0.9])
    fused = fusion.rrf(bm25, cosine, np.zeros(3))
    assert fused[0] == 0.0 and fused[1] == pytest.approx(fused[2])


def test_metrics_hit_at_k_and_mrr() -> None:
    results = [
        CaseResult("a", "cuda_oom", ("cuda_oom", "host_oom")),
        CaseResult("b", "host_oom", ("cuda_oom", "dtype_mismatch", "host_oom")),
        CaseResult("c", "nan_loss", ()),
    ]
    metrics = summarise(results)
    assert metrics.hit1 == pytest.approx(1 / 3)
    assert metrics.hit3 == pytest.approx(2 / 3)
    assert metrics.mrr == pytest.approx((1 + 1 / 3) / 3)
    assert metrics.empty == pytest.approx(1 / 3)
    assert metrics.misses == ["b", "c"]


def test_metrics_over_covered_cases_leave_out_kinds_the_corpus_lacks() -> None:
    results = [
        CaseResult("a", "cuda_oom", ("cuda_oom", "host_oom")),
        CaseResult("b", "host_oom", ("cuda_oom", "host_oom")),
        CaseResult("c", "port_in_use", ("cuda_oom", "host_oom"), covered=False),
        CaseResult("d", "tokenizer_vocab", (), covered=False),
    ]
    metrics = summarise(results)
    assert metrics.hit1 == pytest.approx(1 / 4)
    assert metrics.covered == {"cases": 2, "hit@1": 0.5, "hit@3": 1.0, "mrr@5": 0.75}
    assert metrics.as_dict()["covered"]["cases"] == 2
