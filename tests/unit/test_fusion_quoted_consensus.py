"""A quoted signal (a page without ``signals``) does not overturn BM25 and dense agreeing on
another page; a regex signal and a quote against a dense ranker of noise still count in full
(pure: hand-made evidence)."""

from __future__ import annotations

import numpy as np

from rca.retrieval import fusion
from rca.retrieval.hybrid import Evidence, rank

BM25 = np.array([10.0, 8.5])  # page 0 is BM25's winner
SIGNAL = np.array([0.0, 1.0])  # the neighbour's signal matched


def _top(cosine: list[float], quoted: list[float]) -> int:
    cos = np.array(cosine)
    evidence = Evidence(BM25, BM25, cos, cos, SIGNAL, quoted=np.array(quoted))
    return rank(evidence, k=1)[0][0]


def test_a_neighbours_quote_does_not_overturn_both_rankers() -> None:
    assert _top([0.62, 0.45], quoted=[1.0, 1.0]) == 0


def test_a_neighbours_regex_signal_still_counts_in_full() -> None:
    assert _top([0.62, 0.45], quoted=[0.0, 0.0]) == 1


def test_a_quote_keeps_its_weight_against_a_dense_ranker_of_noise() -> None:
    # Cosines of a ranker that knows nothing stay near 0: no consensus, the quote counts.
    assert _top([0.10, 0.05], quoted=[1.0, 1.0]) == 1


def test_a_quote_keeps_its_weight_when_dense_prefers_its_page() -> None:
    assert _top([0.45, 0.62], quoted=[1.0, 1.0]) == 1


def test_every_signal_counts_in_full_without_cosines_and_on_the_winner() -> None:
    quoted, both = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    assert fusion.quoted_signal(BM25, np.full(2, np.nan), both, quoted).tolist() == [1.0, 1.0]
    assert fusion.quoted_signal(BM25, np.array([0.62, 0.45]), both, quoted).tolist() == [1.0, 0.5]
