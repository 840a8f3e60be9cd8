"""The re-ranking features read real runbooks and incidents the way a reader would, and the
listwise fit learns a feature that separates right from wrong candidates (pure: no database,
no model)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rca.corpus.files import Runbook, without_signals
from rca.evaluation.rerank_features import FEATURES, RerankModel, features
from rca.evaluation.rerank_fit import Candidates, fit, guard_passes
from rca.retrieval.hybrid import gather, rank
from rca.retrieval.index import CorpusIndex, index_from_runbooks
from rca.retrieval.signals import build_signals

_SLUGS = (
    "accelerate-offload-disk-folder",  # cuda_oom, like the next two
    "cuda-oom-training",
    "vllm-engine-cuda-oom",
    "checkpoint-keys-module-prefix",  # another class
)


@pytest.fixture(scope="module")
def index(runbooks: list[Runbook]) -> CorpusIndex:
    chosen = [rb for rb in runbooks if rb.slug in _SLUGS]
    assert len(chosen) == len(_SLUGS)
    return index_from_runbooks(chosen, embed=False)


def _rows(index: CorpusIndex, incident: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Feature name -> value per slug, for every runbook of ``index`` as a candidate."""
    signals = build_signals(incident)
    ev = gather(signals, None, index)
    _, fused = rank(ev, k=len(index))
    order = list(range(len(index)))
    rows = features(signals, index, ev.bm25, ev.cosine, ev.signal, fused, order)
    return {
        index.slugs[p]: dict(zip(FEATURES, rows[i].tolist(), strict=True))
        for i, p in enumerate(order)
    }


_OFFLOAD = {
    "error_type": "ValueError",
    "message": "The current `device_map` had weights offloaded to the disk. Please provide an "
    "`offload_folder` for them.",
    "exceptions": [
        {
            "type": "ValueError",
            "message": "The current device_map had weights offloaded to the disk.",
            "frames": [
                {
                    "filename": "serve.py",
                    "function": "load",
                    "in_app": True,
                    "context_line": "model = AutoModelForCausalLM.from_pretrained(name, "
                    "device_map='auto')",
                },
                {
                    "filename": "/usr/lib/python3/site-packages/transformers/modeling_utils.py",
                    "function": "from_pretrained",
                    "in_app": False,
                    "context_line": "raise",
                },
                {
                    "filename": "/usr/lib/python3/site-packages/accelerate/big_modeling.py",
                    "function": "dispatch_model",
                    "in_app": False,
                    "context_line": "raise",
                },
            ],
        }
    ],
}


def test_the_page_quoting_the_error_covers_it_and_names_the_tracebacks_libraries(
    index: CorpusIndex,
) -> None:
    rows = _rows(index, _OFFLOAD)
    offload, training = rows["accelerate-offload-disk-folder"], rows["cuda-oom-training"]
    # Its symptoms quote the error line whole; the OOM pages quote other errors.
    assert offload["quote_error"] == 1.0
    assert training["quote_error"] < 0.6
    # The traceback runs through transformers and accelerate; the page's tags name accelerate.
    assert offload["libraries_named"] > 0.0
    assert rows["vllm-engine-cuda-oom"]["libraries_named"] == 0.0
    assert offload["signal"] == 1.0 and offload["fused_gap"] == 0.0
    assert offload["bm25_share"] == 1.0 and offload["bm25_rank"] == 1.0


def test_the_exception_type_and_title_words_count_where_the_runbook_names_them(
    index: CorpusIndex,
) -> None:
    rows = _rows(
        index,
        {
            "error_type": "torch.OutOfMemoryError",
            "message": "CUDA out of memory during training. Tried to allocate 2.00 GiB",
        },
    )
    training = rows["cuda-oom-training"]
    # Its signals name OutOfMemoryError; the offload page names no such type.
    assert training["type_in_fields"] > 0.0
    assert rows["accelerate-offload-disk-folder"]["type_in_fields"] == 0.0
    assert training["title_coverage"] > rows["vllm-engine-cuda-oom"]["title_coverage"]
    # Three OOM pages among four candidates: each has the other two of three as support.
    assert training["class_support"] == pytest.approx(2 / 3)
    assert rows["checkpoint-keys-module-prefix"]["class_support"] == 0.0


def test_log_lines_and_chained_exceptions_are_read_apart_from_the_error(
    runbooks: list[Runbook],
) -> None:
    plain = without_signals([rb for rb in runbooks if rb.slug in _SLUGS])
    index = index_from_runbooks(plain, embed=False)
    rows = _rows(
        index,
        {
            "error_type": "RuntimeError",
            "message": "engine core initialisation failed",
            "logs": [
                {
                    "level": "ERROR",
                    "message": "RuntimeError: You can't move a model that has some modules "
                    "offloaded to cpu or disk.",
                }
            ],
        },
    )
    offload = rows["accelerate-offload-disk-folder"]
    assert offload["quote_logs"] == 1.0
    assert offload["quote_error"] < 0.5 and offload["quote_chained"] == 0.0
    # The same line as the first exception of a chain.
    chained = _rows(
        index,
        {
            "error_type": "RuntimeError",
            "message": "engine core initialisation failed",
            "exceptions": [
                {
                    "type": "RuntimeError",
                    "message": "You can't move a model that has some modules offloaded to cpu "
                    "or disk.",
                },
                {"type": "RuntimeError", "message": "engine core initialisation failed"},
            ],
        },
    )["accelerate-offload-disk-folder"]
    assert chained["quote_chained"] == 1.0 and chained["quote_logs"] == 0.0


def _synthetic(seed: int, cases: int = 80, size: int = 6) -> list[Candidates]:
    """Candidates where the fused score is noise and ``title_coverage`` marks the right one."""
    rng = np.random.default_rng(seed)
    title = FEATURES.index("title_coverage")
    groups = []
    for _ in range(cases):
        rows = rng.normal(size=(size, len(FEATURES)))
        right = np.zeros(size, dtype=bool)
        right[rng.integers(size)] = True
        rows[:, title] = rng.uniform(0.0, 0.4, size)
        rows[right, title] += 0.5
        groups.append(Candidates(list(range(size)), rows, right))
    return groups


def test_a_feature_that_separates_right_from_wrong_gets_a_positive_weight() -> None:
    model = fit(_synthetic(0))
    coef = dict(zip(FEATURES, model.coef, strict=True))
    assert coef["title_coverage"] > 1.0
    assert coef["title_coverage"] == max(coef.values(), key=abs)
    # ... and the fitted model puts the right candidate first on cases it never saw.
    unseen = _synthetic(1)
    right = sum(bool(g.right[int(np.argmax(model.score(g.rows)))]) for g in unseen)
    assert right >= 0.9 * len(unseen)


def test_without_any_evidence_the_fit_keeps_the_fused_order() -> None:
    # Right candidates at random: no feature tells them apart, the penalty keeps the rest at
    # nought and the fused score, free of it, keeps its place.
    groups = _synthetic(2)
    for g in groups:
        g.rows[:, FEATURES.index("title_coverage")] = 0.0
    coef = dict(zip(FEATURES, fit(groups, strength=100.0).coef, strict=True))
    assert all(abs(v) < 0.2 for name, v in coef.items() if name != "fused_gap")


def test_the_default_order_passes_the_noise_guard_and_a_dense_led_model_does_not() -> None:
    zeros = tuple(0.0 for _ in FEATURES)
    only = list(zeros)
    only[FEATURES.index("fused_gap")] = 1.0
    assert guard_passes(RerankModel(zeros, tuple(1.0 for _ in FEATURES), tuple(only)), [0, 1])
    dense = list(zeros)
    dense[FEATURES.index("cosine_gap")] = 1.0
    assert not guard_passes(RerankModel(zeros, tuple(1.0 for _ in FEATURES), tuple(dense)), [0])
