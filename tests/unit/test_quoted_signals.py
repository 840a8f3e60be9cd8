"""A plain Markdown runbook's quoted error lines act as its signals, and calibrated fusion
keeps the lexical ranking when the dense ranker is noise (pure: no database, no model)."""

from __future__ import annotations

import numpy as np

from rca.corpus.files import parse_runbook, without_signals
from rca.retrieval.hybrid import search
from rca.retrieval.index import index_from_runbooks
from rca.retrieval.quoted import QuotedPhrases, quoted_phrases
from rca.retrieval.signals import build_signals

# Two pages a team might write, no front matter. The vocabulary page quotes the error; the
# context page talks about indices, tokens and sequences far more often.
_VOCAB = """# Token ids the embedding table does not have

## What you see

- `IndexError: index out of range in self` from the embedding lookup.
- On a GPU a device-side assert is triggered instead, and later CUDA calls fail as well.
- Usually right after adding special tokens, or after switching the tokenizer of a model
  that was trained with another one.

## Why

A token id is at least the vocabulary size: a tokenizer was extended and the model was not.

## Fix

1. Call `model.resize_token_embeddings(len(tokenizer))` after adding tokens.
"""
_CONTEXT = """# Inputs longer than the model's context window

## What you see

- IndexError: an index out of range in self attention; every index past the last
  position is out of range.
- `Token indices sequence length is longer than the specified maximum sequence length`.

## Why

Every index of the position table is used up: the sequence has more tokens than positions.
Long inputs index past the end; any index beyond the last position fails, and a self
attention layer then sees an out of range index in every later token of the sequence.

## Fix

1. Truncate the tokens (`truncation=True`, `max_length=...`) to the model's range.
"""
_OOM = """# GPU memory exhausted

Seen as `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate N MiB`.

1. Lower the batch size.
"""


def _plain_index(signals: bool = False):  # type: ignore[no-untyped-def]
    pages = [
        parse_runbook(text, source=f"{name}.md")
        for name, text in (("vocab", _VOCAB), ("context", _CONTEXT), ("oom", _OOM))
    ]
    return index_from_runbooks(pages if signals else without_signals(pages), embed=False)


def _incident(error_type: str, message: str):  # type: ignore[no-untyped-def]
    return build_signals({"error_type": error_type, "message": message})


def test_a_quote_is_a_phrase_of_at_least_four_distinct_tokens() -> None:
    # Tokens as BM25 has them: `model.eval()` is model.eval, model, eval: three.
    phrases = quoted_phrases(
        "Run `model.eval()` or `num_workers=0`; the error reads "
        "`IndexError: index out of range in self` (once more: `IndexError: index out of range "
        "in self`)."
    )
    assert phrases == [frozenset({"indexerror", "index", "error", "out", "range", "self"})]


def test_an_error_containing_every_word_of_a_quote_matches_it_and_one_missing_a_word_does_not() -> (
    None
):
    matcher = QuotedPhrases([quoted_phrases(_VOCAB), quoted_phrases(_OOM)])
    hit = matcher.matches("IndexError: index 50321 out of range in self (vocab 50265)")
    assert hit.tolist() == [1.0, 0.0]
    assert matcher.matches("IndexError: list index out of range").tolist() == [0.0, 0.0]
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0)"
    assert matcher.matches(oom).tolist() == [0.0, 1.0]


def test_a_plain_page_that_quotes_the_error_outranks_one_that_repeats_its_words() -> None:
    index = _plain_index()
    incident = _incident("IndexError", "index out of range in self")
    # BM25 alone prefers the page that says index / out / range / self most often ...
    bm25, _ = index.bm25_scores(incident.bm25_query())
    assert index.slugs[int(np.argmax(bm25))] == "context"
    # ... the page quoting the exact error wins once its quote counts as a signal.
    found = search(incident, None, k=3, index=index)
    assert [r.slug for r in found][:2] == ["vocab", "context"]
    assert found[0].signal == 1.0


def test_runbooks_with_signals_keep_only_their_own() -> None:
    text = (
        "---\nfailure_class: embedding_index_out_of_range\nsignals: ['never matches this']\n---\n"
        + _VOCAB
    )
    index = index_from_runbooks([parse_runbook(text, source="vocab.md")], embed=False)
    assert index.signal_matches("IndexError: index out of range in self").tolist() == [0.0]


def test_fusion_keeps_the_lexical_ranking_when_the_dense_ranker_is_noise() -> None:
    # An embedding model that knows nothing of the domain: random unit vectors for every
    # chunk and incident (cosines ~N(0, 1/sqrt(384))). Over many incidents the fused ranking
    # is right at least as often as the lexical one (BM25 and signals, no embedding).
    index = _plain_index(signals=True)
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(len(index.chunk_texts), 384)).astype(np.float32)
    index.embeddings = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    incidents = (
        [("vocab", "IndexError", f"index {n} is out of range in self") for n in range(20)]
        + [
            (
                "context",
                "",
                f"Token indices sequence length is longer than the specified maximum "
                f"sequence length for this model ({n} > 512)",
            )
            for n in range(20)
        ]
        + [
            ("oom", "torch.OutOfMemoryError", f"CUDA out of memory. Tried to allocate {n} MiB")
            for n in range(20)
        ]
    )
    lexical = fused = 0
    for slug, error_type, message in incidents:
        signals = _incident(error_type, message)
        noise = rng.normal(size=384)
        lexical += search(signals, None, k=1, index=index)[0].slug == slug  # BM25 + signals
        fused += search(signals, noise.tolist(), k=1, index=index)[0].slug == slug
    assert fused >= lexical, (fused, lexical)
