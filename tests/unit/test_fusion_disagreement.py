"""Calibrated fusion when the two rankers disagree on the winner (issue 15: never worse than
the best single ranker): dense's spread is shrunk by ``cosine_disagree`` unless its best
runbook is BM25's best too (pure: hand-made evidence, no database, no model)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.evaluation.noise_guard import admissible
from rca.retrieval import fusion
from rca.retrieval.hybrid import Evidence, rank
from rca.retrieval.weights import DEFAULT_WEIGHTS

OFF = replace(DEFAULT_WEIGHTS, cosine_disagree=1.0)
NO_SIGNAL = np.zeros(3)


def _evidence(bm25: list[float], cosine: list[float], signal: list[float]) -> Evidence:
    b, c = np.array(bm25), np.array(cosine)
    return Evidence(bm25=b, chunk_bm25=b, cosine=c, chunk_cos=c, signal=np.array(signal))


def test_a_dense_ranker_that_disagrees_by_a_small_margin_follows_bm25() -> None:
    # BM25 puts runbook 0 first by 7 % of its score; dense prefers runbook 1 by 0.08. In
    # full the cosine overturns the lexical winner; with the spread halved it does not.
    bm25 = np.array([10.0, 9.3, 1.0])
    cosine = np.array([0.50, 0.58, 0.40])
    assert int(np.argmax(fusion.calibrated(bm25, cosine, NO_SIGNAL, OFF))) == 1
    assert int(np.argmax(fusion.calibrated(bm25, cosine, NO_SIGNAL))) == 0
    order, _ = rank(_evidence(bm25.tolist(), cosine.tolist(), [0.0, 0.0, 0.0]), k=3)
    assert order == [0, 1, 2]  # BM25's order


def test_a_dense_ranker_that_disagrees_by_a_clear_margin_still_overturns() -> None:
    bm25 = np.array([10.0, 9.0, 1.0])
    cosine = np.array([0.20, 0.70, 0.10])
    assert int(np.argmax(fusion.calibrated(bm25, cosine, NO_SIGNAL))) == 1


def test_when_both_rankers_name_the_winner_dense_counts_in_full() -> None:
    # Dense agrees with BM25 on runbook 0; runbook 1 has a matched signal. Dense's full
    # margin keeps the agreed winner (shrunk, it would lose to the signal), and the scores
    # are those of the unshrunk formula.
    bm25 = np.array([10.0, 7.5, 1.0])
    cosine = np.array([0.75, 0.45, 0.30])
    signal = np.array([0.0, 1.0, 0.0])
    fused = fusion.calibrated(bm25, cosine, signal)
    assert np.allclose(fused, fusion.calibrated(bm25, cosine, signal, OFF))
    assert int(np.argmax(fused)) == 0


def test_a_tie_for_bm25s_best_counts_as_agreement() -> None:
    bm25 = np.array([10.0, 10.0, 1.0])
    cosine = np.array([0.30, 0.60, 0.20])
    assert np.allclose(
        fusion.calibrated(bm25, cosine, NO_SIGNAL), fusion.calibrated(bm25, cosine, NO_SIGNAL, OFF)
    )


def test_without_lexical_evidence_dense_ranks_alone_as_before() -> None:
    bm25 = np.zeros(3)
    cosine = np.array([0.30, 0.60, 0.20])
    assert np.allclose(
        fusion.calibrated(bm25, cosine, NO_SIGNAL), fusion.calibrated(bm25, cosine, NO_SIGNAL, OFF)
    )


def test_without_cosines_the_lexical_ranking_and_scores_are_unchanged() -> None:
    # Unit tests and bm25-only search score no cosine: the shrink must not move anything.
    bm25 = np.array([3.0, 7.0, 5.0])
    cosine = np.full(3, np.nan)
    signal = np.array([1.0, 0.0, 0.0])
    assert np.allclose(
        fusion.calibrated(bm25, cosine, signal), fusion.calibrated(bm25, cosine, signal, OFF)
    )


def test_dense_keeps_its_own_order_and_bm25s_winner_its_score() -> None:
    bm25 = np.array([10.0, 1.0, 2.0, 3.0])
    cosine = np.array([0.1, 0.7, 0.5, 0.3])
    shrunk = fusion.dense_term(bm25, cosine, DEFAULT_WEIGHTS)
    assert list(np.argsort(-shrunk)) == list(np.argsort(-cosine))
    assert shrunk[0] == 0.1  # BM25's best keeps its cosine, hence its fused score
    assert np.allclose(shrunk - 0.1, DEFAULT_WEIGHTS.cosine_disagree * (cosine - 0.1))
    fused, unshrunk = (
        fusion.calibrated(bm25, cosine, np.zeros(4), w) for w in (DEFAULT_WEIGHTS, OFF)
    )
    assert fused[0] == unshrunk[0]
    assert (fused[1:3] < unshrunk[1:3]).all()  # dense's favourites lose what they led by


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0, 50), min_size=2, max_size=8).flatmap(
        lambda b: st.tuples(
            st.just(b),
            st.lists(st.floats(-1, 1), min_size=len(b), max_size=len(b)),
            st.lists(st.sampled_from([0.0, 1.0]), min_size=len(b), max_size=len(b)),
        )
    )
)
def test_the_score_stays_a_share_of_the_ceiling(
    data: tuple[list[float], list[float], list[float]],
) -> None:
    bm25, cosine, signal = (np.array(x) for x in data)
    fused = fusion.calibrated(bm25, cosine, signal)
    assert (fused <= 1.0 + 1e-9).all()
    # Never further from the unshrunk score than the cosine's own spread allows.
    spread = float(cosine.max() - cosine.min())
    unshrunk = fusion.calibrated(bm25, cosine, signal, OFF)
    bound = DEFAULT_WEIGHTS.cosine_scale * spread / fusion.ceiling() + 1e-9
    assert (np.abs(fused - unshrunk) <= bound).all()


def test_the_default_passes_the_noise_guard_and_the_reverted_setting_still_fails() -> None:
    assert admissible(DEFAULT_WEIGHTS)
    assert not admissible(replace(DEFAULT_WEIGHTS, signal=0.3))
