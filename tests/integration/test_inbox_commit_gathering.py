"""Gathering in the inbox's group commit (ingest/inbox/committer.py): a leader waits for the
ingest requests of its process already under way, so they share its WAL flush, and never
waits for one that ended without writing nor when no other request is under way."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from django.db import connection

from ingest.inbox import committer as committer_module
from ingest.inbox import write as inbox_write
from ingest.inbox.committer import Committer
from ingest.inbox.records import make_records
from ingest.models import InboxItem
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)

#: Bounds far beyond any test's run: a test passes only if the gathering ends by itself.
FOREVER = 600.0


class CountingInsert:
    """The real insert, recording how many records each statement carried."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def __call__(self, records, conn):
        self.sizes.append(len(records))
        return inbox_write._insert_direct(records, conn)


@pytest.fixture
def committer(monkeypatch) -> Iterator[tuple[Committer, CountingInsert]]:
    monkeypatch.setattr(committer_module, "GATHER_SECONDS", FOREVER)
    insert = CountingInsert()
    committer = Committer(insert, inbox_write.wake, threads=4)
    yield committer, insert
    committer.close()


def _records(project, event_id: str):
    return make_records(project.pk, "api", [{**shape_error(8), "event_id": event_id}])


def _run(target) -> threading.Thread:
    def body() -> None:
        try:
            target()
        finally:
            connection.close()

    thread = threading.Thread(target=body)
    thread.start()
    return thread


def _until(condition) -> None:
    for _ in range(3000):  # a loaded machine starts threads slowly
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError("timed out")


def test_a_request_under_way_shares_the_leaders_commit(committer, monkeypatch):
    committer, insert = committer
    monkeypatch.setattr(committer_module, "QUIET_SECONDS", 0.05)
    project = project_with_key().project
    may_write = threading.Event()

    def slow_request() -> None:  # authenticated and parsing while the other writes
        with committer.expecting():
            may_write.wait(30)
            committer.write(_records(project, "slow"))

    def quick_request() -> None:
        with committer.expecting():
            committer.write(_records(project, "quick"))

    slow = _run(slow_request)
    _until(lambda: committer._coming == 1)
    quick = _run(quick_request)
    _until(lambda: len(committer._queue) == 1)  # quick leads, and waits for slow
    may_write.set()
    for thread in (slow, quick):
        thread.join(60)
    assert insert.sizes == [2]  # one INSERT, one commit, one WAL flush for both
    assert set(InboxItem.objects.values_list("event_id", flat=True)) == {"slow", "quick"}
    assert committer._coming == 0


def test_a_request_that_ends_without_writing_releases_the_leader(committer, monkeypatch):
    committer, insert = committer
    monkeypatch.setattr(committer_module, "QUIET_SECONDS", 0.05)
    project = project_with_key().project
    may_end = threading.Event()

    def refused_request() -> None:  # a 401, a 400: it never writes
        with committer.expecting():
            may_end.wait(30)

    refused = _run(refused_request)
    _until(lambda: committer._coming == 1)
    done: list[object] = []
    writer = _run(lambda: done.append(committer.write(_records(project, "only"))))
    _until(lambda: len(committer._queue) == 1)
    may_end.set()
    for thread in (refused, writer):
        thread.join(60)
    assert done and insert.sizes == [1]
    assert committer._coming == 0


def test_with_nothing_under_way_and_no_recent_commit_a_write_commits_at_once(
    committer, monkeypatch
):
    committer, insert = committer
    monkeypatch.setattr(committer_module, "QUIET_SECONDS", FOREVER)
    project = project_with_key().project
    rows = committer.write(_records(project, "alone"))  # would hang if it gathered
    assert [row[2] for row in rows] == ["alone"] and insert.sizes == [1]


def test_once_every_thread_of_the_process_waits_the_leader_stops_gathering(committer, monkeypatch):
    committer, insert = committer
    monkeypatch.setattr(committer_module, "QUIET_SECONDS", FOREVER)
    committer._threads = 2
    project = project_with_key().project
    committer._ended_at = float("inf")  # as if a commit had just ended: gather
    first = _run(lambda: committer.write(_records(project, "a")))
    _until(lambda: len(committer._queue) == 1)
    second = _run(lambda: committer.write(_records(project, "b")))
    for thread in (first, second):
        thread.join(60)
    assert not first.is_alive() and not second.is_alive()
    assert insert.sizes == [2]


def test_a_refused_ingest_request_leaves_nothing_expected(client, monkeypatch):
    """The middleware marks every ingest request; one refused before its write unmarks it."""
    committer = Committer(inbox_write._insert_direct, inbox_write.wake)
    monkeypatch.setattr(inbox_write, "_committer", committer)
    try:
        response = client.post(
            "/api/v1/incidents",
            data=b"{}",
            content_type="application/json",
            HTTP_AUTHORIZATION="Bearer rc_nope_nope",
        )
        assert response.status_code == 401
        assert committer._coming == 0
    finally:
        committer.close()
