"""Idempotency claims of JSON incidents spooled first (ingest/inbox/claims.py).

One claim per (project, event id) on a host, whichever process or thread asks; a retry
waits out the request that holds it; what the holder did (accepted, abandoned, died
before saying) decides the retry's answer.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.inbox import claims


def _names(folder) -> list[str]:
    return sorted(os.listdir(claims.directory(folder)))


def test_a_claim_accepted_answers_every_later_take_until_released(tmp_path):
    first = claims.take(tmp_path, 1, "evt-1")
    assert first is not None and first.new
    first.accepted()
    assert claims.take(tmp_path, 1, "evt-1") is None  # a retry: 200
    assert claims.take(tmp_path, 2, "evt-1") is not None  # another project's id is its own
    claims.release(tmp_path, [(1, "evt-1")])
    again = claims.take(tmp_path, 1, "evt-1")  # stored: the database answers from now on
    assert again is not None and again.new


def test_an_abandoned_claim_leaves_the_event_id_new(tmp_path):
    claim = claims.take(tmp_path, 1, "evt")
    assert claim is not None
    claim.abandon()  # the spool refused it (503): nothing was accepted
    assert _names(tmp_path) == []
    retry = claims.take(tmp_path, 1, "evt")
    assert retry is not None and retry.new


def test_a_claim_whose_writer_died_unconfirmed_is_taken_over(tmp_path):
    claim = claims.take(tmp_path, 1, "evt")
    assert claim is not None
    os.close(claim.fd)  # the process died: its lock went, no byte was written
    takeover = claims.take(tmp_path, 1, "evt")
    assert takeover is not None and not takeover.new  # spool this copy too, answer 200
    takeover.accepted()
    assert claims.take(tmp_path, 1, "evt") is None


def test_a_retry_waits_for_the_first_copy_to_be_accepted(tmp_path):
    first = claims.take(tmp_path, 1, "evt")
    assert first is not None
    answers: list[object] = []
    retry = threading.Thread(target=lambda: answers.append(claims.take(tmp_path, 1, "evt")))
    retry.start()
    time.sleep(0.2)
    assert answers == []  # still waiting on the first request's lock
    first.accepted()
    retry.join(5)
    assert answers == [None]


def test_a_retry_waiting_on_an_abandoned_claim_takes_it_new(tmp_path):
    first = claims.take(tmp_path, 1, "evt")
    assert first is not None
    answers: list[claims.Claim | None] = []
    retry = threading.Thread(target=lambda: answers.append(claims.take(tmp_path, 1, "evt")))
    retry.start()
    time.sleep(0.1)
    first.abandon()
    retry.join(5)
    [claim] = answers
    assert claim is not None and claim.new


def _race(folder: str, start: float, results) -> None:
    time.sleep(max(0.0, start - time.time()))
    claim = claims.take(folder, 7, "the-same-id")
    if claim is not None:
        time.sleep(0.05)  # as a request spooling its record
        claim.accepted()
    results.put((os.getpid(), claim is not None and claim.new))


def test_one_claim_wins_across_processes(tmp_path):
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    start = time.time() + 0.3
    procs = [ctx.Process(target=_race, args=(str(tmp_path), start, results)) for _ in range(6)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=20) for _ in procs]
    for p in procs:
        p.join(10)
    assert sorted(new for _, new in outcomes) == [False] * 5 + [True]
    assert len({pid for pid, _ in outcomes}) == 6
    assert [n for n in _names(tmp_path) if not n.startswith(".")] == [claims.name(7, "the-same-id")]


@settings(max_examples=60, deadline=None)
@given(
    a=st.tuples(st.integers(1, 2**40), st.text(min_size=1, max_size=80)),
    b=st.tuples(st.integers(1, 2**40), st.text(min_size=1, max_size=80)),
)
def test_any_event_id_names_one_safe_file(a, b):
    name = claims.name(*a)
    assert len(name) == 40 and set(name) <= set("0123456789abcdef")
    assert (claims.name(*b) == name) == (a == b)


@settings(max_examples=40, deadline=None)
@given(event_id=st.text(min_size=1, max_size=64))
def test_any_event_id_round_trips(tmp_path_factory, event_id):
    folder = tmp_path_factory.mktemp("claims")
    claim = claims.take(folder, 3, event_id)
    assert claim is not None and claim.new
    claim.accepted()
    assert claims.take(folder, 3, event_id) is None
    assert claims.count(folder) == 1
    claims.release(folder, [(3, event_id)])
    assert claims.count(folder) == 0
