"""Framework and exception-class agreement on the stored corpus (real PostgreSQL, real
embedding model): the worker's index reads each runbook's declared frameworks from the
database, a plain page gets its own from its code, and the stored search weighs them."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from rca.corpus.embeddings import embed, embed_missing_chunks
from rca.corpus.files import bundled_runbook_dir
from rca.corpus.store import load_runbooks
from rca.retrieval import index as corpus_index
from rca.retrieval.hybrid import search
from rca.retrieval.signals import build_signals
from rca.retrieval.weights import DEFAULT_WEIGHTS

#: The weights every CV fold chose on 230 dev cases (off by default until the confidence
#: is refit: rca/retrieval/weights.py).
AGREEING = replace(DEFAULT_WEIGHTS, framework=0.5, exception_type=0.25)

PLAIN_PAGE = """# Training stops with a CUDA error

When training stops with a CUDA error, release what the process holds with
`torch.cuda.empty_cache()` and rerun with `CUDA_LAUNCH_BLOCKING=1` to see the failing call.
"""


@pytest.mark.django_db
def test_the_stored_index_reads_declared_frameworks_and_a_plain_pages_code(
    tmp_path: Path,
) -> None:
    for name in ("tf-gpu-not-detected.md", "cuda-oom-inference.md"):
        shutil.copy(bundled_runbook_dir() / name, tmp_path / name)
    (tmp_path / "cuda-error-plain.md").write_text(PLAIN_PAGE, encoding="utf-8")
    load_runbooks(tmp_path)  # rolled back with the test
    index = corpus_index.current_index()
    frameworks = dict(zip(index.slugs, index.frameworks, strict=True))
    assert frameworks == {
        "tf-gpu-not-detected": {"tensorflow"},  # declared: [tensorflow, keras]
        "cuda-oom-inference": {"pytorch"},  # declared: [pytorch, transformers, diffusers]
        "cuda-error-plain": {"pytorch"},  # no front matter: read from its code
    }


@pytest.mark.django_db
def test_the_stored_search_adds_agreement_to_the_runbook_of_the_incidents_framework(
    tmp_path: Path,
) -> None:
    for name in ("tf-gpu-not-detected.md", "cuda-oom-inference.md"):
        shutil.copy(bundled_runbook_dir() / name, tmp_path / name)
    load_runbooks(tmp_path)
    embed_missing_chunks()
    signals = build_signals(
        {
            "error_type": "tensorflow.python.framework.errors_impl.InternalError",
            "message": "CUDA runtime implicit initialization on GPU:0 failed. "
            "Status: out of memory",
        }
    )
    assert signals.frameworks == ["tensorflow"]
    vector = embed([signals.embedding_text()])[0]
    blind = replace(DEFAULT_WEIGHTS, framework=0.0, exception_type=0.0)
    with_agreement = {r.slug: r.fused for r in search(signals, vector, weights=AGREEING)}
    without = {r.slug: r.fused for r in search(signals, vector, weights=blind)}
    ceiling = 1.0 + AGREEING.cosine_scale + AGREEING.signal
    assert with_agreement["tf-gpu-not-detected"] == pytest.approx(
        without["tf-gpu-not-detected"] + AGREEING.framework / ceiling, abs=1e-5
    )
    assert with_agreement["cuda-oom-inference"] == pytest.approx(
        without["cuda-oom-inference"], abs=1e-6
    )
