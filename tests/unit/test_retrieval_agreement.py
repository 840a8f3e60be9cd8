"""Framework and exception-class agreement between an incident and each runbook, and how
fusion weighs it (pure: no database, no model; pages built the way a team writes them)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rca.corpus.files import parse_runbook
from rca.retrieval import fusion
from rca.retrieval.agreement import class_names, exception_class, runbook_frameworks
from rca.retrieval.hybrid import search
from rca.retrieval.index import index_from_runbooks
from rca.retrieval.signals import build_signals
from rca.retrieval.weights import DEFAULT_WEIGHTS

#: The weights every CV fold chose on 230 dev cases (off by default until the confidence
#: is refit: rca/retrieval/weights.py).
AGREEING = replace(DEFAULT_WEIGHTS, framework=0.5, exception_type=0.25)

#: Two plain pages (no front matter) on running out of GPU memory, worded alike; only their
#: code says which framework each is for.
PAGES = {
    "tf-memory": """# GPU memory runs out during training

## What you see

OOM when allocating a tensor of a large shape: the process runs out of GPU memory for a
large batch.

## Fix

1. Let memory grow: `tf.config.experimental.set_memory_growth(gpu, True)`.
2. Lower the batch size.
""",
    "torch-memory": """# GPU memory runs out during training

## What you see

OOM when allocating a tensor of a large shape: the process runs out of GPU memory for a
large batch, a tensor of float activations at a time.

## Fix

1. Release cached blocks: `torch.cuda.empty_cache()`.
2. Lower the batch size.
""",
}

TF_OOM = {
    "error_type": "tensorflow.python.framework.errors_impl.ResourceExhaustedError",
    "message": "OOM when allocating tensor with shape[64,372,32,32] and type float",
}


def _index(pages: dict[str, str] = PAGES):  # type: ignore[no-untyped-def]
    runbooks = [parse_runbook(text, source=f"{slug}.md") for slug, text in pages.items()]
    return index_from_runbooks(runbooks, embed=False)


def test_declared_frameworks_are_read_in_the_incident_sides_names() -> None:
    assert runbook_frameworks(["keras", "transformers"], "torch.cuda") == {"tensorflow"}
    assert runbook_frameworks(["Flax"], "") == {"jax"}
    # A page that declares only libraries outside the vocabulary names no framework of
    # ours; its text is not read then (the author said what it is for).
    assert runbook_frameworks(["transformers", "vllm"], "torch.cuda.empty_cache()") == set()


def test_a_plain_page_gets_its_frameworks_from_its_own_code() -> None:
    index = _index()
    by_slug = dict(zip(index.slugs, index.frameworks, strict=True))
    assert by_slug == {"tf-memory": {"tensorflow"}, "torch-memory": {"pytorch"}}


def test_the_incident_frameworks_come_from_its_code_not_its_words() -> None:
    assert build_signals(TF_OOM).frameworks == ["tensorflow"]
    talk = {"error_type": "RuntimeError", "message": "my pytorch and tensorflow models fail"}
    assert build_signals(talk).frameworks == []


@pytest.mark.parametrize(
    ("error_type", "quoted"),
    [
        ("OutOfMemoryError", "OutOfMemoryError"),
        ("OSError", "OSError"),
        ("none (tokenizer warning)", ""),
        ("Fail", ""),  # one capital: a word, not a class name a page would quote as such
        ("", ""),
    ],
)
def test_the_exception_class_a_page_would_quote(error_type: str, quoted: str) -> None:
    assert exception_class(error_type) == quoted


def test_a_dotted_path_quotes_its_class() -> None:
    text = "raises `torch.cuda.OutOfMemoryError`, not an OSError; see the Fix section"
    assert class_names(text) == {"OutOfMemoryError", "OSError"}


def test_a_class_only_one_page_quotes_counts_fully_and_one_every_page_quotes_not_at_all() -> None:
    pages = {
        **PAGES,
        "tf-memory": PAGES["tf-memory"] + "\nTensorFlow raises `ResourceExhaustedError`.\n",
    }
    pages = {slug: text + "\nAnything else is a `RuntimeError`.\n" for slug, text in pages.items()}
    index = _index(pages)
    rarity = dict(zip(index.slugs, index.exception_matches("ResourceExhaustedError"), strict=True))
    assert rarity == {"tf-memory": 1.0, "torch-memory": 0.0}
    assert not index.exception_matches("RuntimeError").any()
    assert not index.exception_matches("KeyError").any()


def test_a_tensorflow_incident_ranks_the_tensorflow_page_over_a_pytorch_page_worded_alike() -> None:
    index = _index()
    signals = build_signals(TF_OOM)
    blind = DEFAULT_WEIGHTS
    assert blind.framework == blind.exception_type == 0.0
    # By words alone the PyTorch page, which says "tensor" once more, wins.
    assert search(signals, None, index=index, weights=blind)[0].slug == "torch-memory"
    assert search(signals, None, index=index, weights=AGREEING)[0].slug == "tf-memory"


def test_an_incident_that_shows_no_framework_ranks_as_before() -> None:
    index = _index()
    signals = build_signals({"error_type": "", "message": TF_OOM["message"]})
    assert signals.frameworks == []
    blind = replace(DEFAULT_WEIGHTS, framework=0.0, exception_type=0.0)
    assert [r.fused for r in search(signals, None, index=index, weights=AGREEING)] == [
        r.fused for r in search(signals, None, index=index, weights=blind)
    ]


def test_agreement_adds_its_weight_and_leaves_other_runbooks_scores_alone() -> None:
    bm25, cosine, signal = np.array([4.0, 5.0]), np.array([0.5, 0.5]), np.zeros(2)
    w = AGREEING
    plain = fusion.calibrated(bm25, cosine, signal, w)
    agreed = fusion.calibrated(
        bm25, cosine, signal, w, framework=np.array([1.0, 0.0]), exception=np.array([0.5, 0.0])
    )
    assert agreed[1] == plain[1]
    bonus = (w.framework + 0.5 * w.exception_type) / fusion.ceiling(w)
    assert agreed[0] == pytest.approx(plain[0] + bonus)
    # The other strategies are kept as measured: agreement does not enter them.
    assert np.array_equal(
        fusion.fuse("rrf", bm25, cosine, signal, w, np.array([1.0, 0.0])),
        fusion.fuse("rrf", bm25, cosine, signal, w),
    )
