"""A plain Markdown runbook's quoted error lines act as its signals, and calibrated fusion
keeps the lexical ranking when the dense ranker is noise (pure: no database, no model)."""

from __future__ import annotations

import numpy as np

from rca.corpus.files import parse_runbook, without_signals
from rca.evaluation.noise_guard import PLAIN_PAGES, SEEDS, noise_trial
from rca.retrieval.hybrid import search
from rca.retrieval.index import index_from_runbooks
from rca.retrieval.quoted import QuotedPhrases, quoted_phrases
from rca.retrieval.signals import build_signals
from rca.retrieval.weights import DEFAULT_WEIGHTS

# Pages a team might write, no front matter (the noise guard's corpus): the vocabulary
# page quotes the error; the context page talks about indices, tokens and sequences more.
_VOCAB, _CONTEXT, _OOM = (PLAIN_PAGES[name] for name in ("vocab", "context", "oom"))


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
    # is right at least as often as the lexical one (BM25 and signals, no embedding). The
    # procedure is the noise guard's (rca.evaluation.noise_guard), asked for every one of
    # its seeds: the default must not pass by a lucky draw of the noise.
    for seed in SEEDS:
        fused, lexical = noise_trial(DEFAULT_WEIGHTS, seed)
        assert fused >= lexical, (seed, fused, lexical)
