"""The weighted BM25 query (rca/retrieval/query.py) on real tracebacks of the dev cases (pure)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from ingest.derive import derive
from rca.evaluation.ablation import PARTS
from rca.retrieval.bm25 import BM25Index
from rca.retrieval.query import bm25_query, query_parts
from rca.retrieval.signals import Signals, build_signals
from rca.retrieval.weights import DEFAULT_QUERY_WEIGHTS

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


def _signals(case_id: str) -> Signals:
    with DEV_CASES.open(encoding="utf-8") as handle:
        case = next(c for c in map(json.loads, handle) if c and c["id"] == case_id)
    derived = derive(
        {
            "error_type": case["exception_type"],
            "message": case["message"],
            "stacktrace": case["traceback"],
            "logs": case["logs"],
        }
    )
    return build_signals(derived.__dict__ | {"inference_context": {}})


def test_the_users_innermost_code_line_comes_first_and_file_names_stay_out() -> None:
    signals = _signals("c045")  # five frames, all the user's; the innermost calls torch.sqrt
    assert signals.app_code[0].startswith("FeatSimi_Mat = torch.sqrt(FeatSimi_Mat)")
    query = signals.bm25_query()
    assert query["sqrt"] >= DEFAULT_QUERY_WEIGHTS.app_code
    # file names, extensions and "<module>" name the project, not the failure
    assert not {"py", "module", "math_utils.py", "rf_des.py"} & set(query)
    parts = [p for p in query_parts(signals) if p.name == "own-code frames"]
    assert [p.weight for p in parts] == sorted((p.weight for p in parts), reverse=True)


def test_library_frames_below_the_users_code_name_where_it_was_raised() -> None:
    signals = _signals("c047")
    assert signals.app_code[0].startswith("embed = self.corrector.embeddings(")
    assert signals.library_frames[0] == "forward embeddings += position_embeddings"
    # a library frame weighs less than the user's own innermost line
    query = signals.bm25_query()
    assert query["position_embedding"] == DEFAULT_QUERY_WEIGHTS.library_frames
    assert query["corrector"] == DEFAULT_QUERY_WEIGHTS.app_code


def test_a_word_every_part_repeats_is_capped() -> None:
    signals = _signals("c047")  # "size" and "tensor" in the message and the shape words
    query = signals.bm25_query()
    assert max(query.values()) == DEFAULT_QUERY_WEIGHTS.token_cap
    uncapped = bm25_query(signals, replace(DEFAULT_QUERY_WEIGHTS, token_cap=100.0))
    assert uncapped["size"] > query["size"]


def test_every_query_part_can_be_ablated() -> None:
    cases = ("c045", "c047", "c073", "c084")
    names = {part.name for case in cases for part in query_parts(_signals(case))}
    assert names <= set(PARTS)


def test_a_weighted_query_scores_like_repeated_tokens() -> None:
    docs = [["cuda", "memory", "oom"], ["nan", "loss"], ["cuda", "driver"]]
    index = BM25Index(docs)
    tokens = ["cuda", "cuda", "nan"]
    np.testing.assert_allclose(index.scores(dict(Counter(tokens))), index.scores(tokens))
    half = index.scores({"cuda": 0.5})
    np.testing.assert_allclose(half * 2, index.scores(["cuda"]))
