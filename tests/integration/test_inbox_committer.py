"""Group commit (ingest/inbox/committer.py): concurrent requests share one INSERT and commit,
and each gets back exactly its own rows, committed, before it answers."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from django.db import connection, transaction

from ingest.inbox import write as inbox_write
from ingest.inbox.committer import Committer
from ingest.inbox.records import make_records
from ingest.models import InboxItem
from ingest.prepared import fetch
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)


class CountingInsert:
    """The real insert, counting statements and how many records each carried."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.gate = threading.Event()
        self.entered = threading.Event()

    def __call__(self, records, conn):
        self.entered.set()
        self.gate.wait(30)  # lets the requests queue up behind the first statement
        self.sizes.append(len(records))
        return inbox_write._insert_direct(records, conn)


@pytest.fixture
def committer() -> Iterator[tuple[Committer, CountingInsert]]:
    insert = CountingInsert()
    committer = Committer(insert, inbox_write.wake)
    yield committer, insert
    insert.gate.set()
    committer.close()


def _queued(committer: Committer, n: int) -> None:
    """Wait until `n` requests wait behind the statement under way."""
    for _ in range(3000):  # a loaded machine starts threads slowly
        if len(committer._queue) >= n:
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"{len(committer._queue)} requests queued, expected {n}")


def _records(project, ids: list[str]):
    return make_records(project.pk, "api", [{**shape_error(8), "event_id": i} for i in ids])


def test_concurrent_writes_share_statements_and_get_their_own_rows(committer):
    committer, insert = committer
    project = project_with_key("ml-platform").project
    results: dict[int, list] = {}

    def request(n: int) -> None:
        try:
            ids = [f"r{n}"] if n % 3 else [f"r{n}", "shared"]  # "shared": one request wins
            results[n] = committer.write(_records(project, ids))
        finally:
            connection.close()

    threads = [threading.Thread(target=request, args=(n,)) for n in range(12)]
    threads[0].start()
    assert insert.entered.wait(30)  # the first request's statement is under way, held
    for thread in threads[1:]:
        thread.start()
    _queued(committer, 11)
    insert.gate.set()
    for thread in threads:
        thread.join(30)

    assert len(insert.sizes) == 2 and sum(insert.sizes) == 16  # the first, then the 11 others
    for n, rows in results.items():
        mine = {row[2] for row in rows}
        assert f"r{n}" in mine and mine <= {f"r{n}", "shared"}
    assert sum("shared" in {row[2] for row in rows} for rows in results.values()) == 1
    stored = set(InboxItem.objects.values_list("event_id", flat=True))
    assert stored == {f"r{n}" for n in range(12)} | {"shared"}  # committed when answered
    again = committer.write(_records(project, ["r1"]))
    assert again == []  # a retry inserts nothing: the request answers 200


def test_one_requests_bad_rows_do_not_fail_the_others(committer):
    committer, insert = committer
    project = project_with_key("ml-platform").project
    bad = _records(project, ["bad"])
    bad[0]["project_id"] = 10**9  # no such project: a foreign key violation
    outcomes: dict[str, object] = {}

    def request(name, records) -> None:
        try:
            outcomes[name] = committer.write(records)
        except Exception as exc:
            outcomes[name] = exc
        finally:
            connection.close()

    threads = [
        threading.Thread(target=request, args=("first", _records(project, ["first"]))),
        threading.Thread(target=request, args=("bad", bad)),
        threading.Thread(target=request, args=("good", _records(project, ["good"]))),
    ]
    threads[0].start()
    assert insert.entered.wait(30)
    threads[1].start()
    threads[2].start()
    _queued(committer, 2)  # bad and good wait together behind "first"
    insert.gate.set()
    for thread in threads:
        thread.join(30)
    assert isinstance(outcomes["bad"], Exception)
    assert [row[2] for row in outcomes["good"]] == ["good"]
    assert set(InboxItem.objects.values_list("event_id", flat=True)) == {"first", "good"}
    assert insert.sizes == [1, 2, 1, 1]  # bad and good together, then each on its own


def test_a_statement_deallocated_behind_the_committers_back_is_prepared_again(committer):
    committer, insert = committer
    insert.gate.set()
    project = project_with_key("ml-platform").project
    assert [row[2] for row in committer.write(_records(project, ["before"]))] == ["before"]
    with committer._conn.cursor() as cursor:  # as a pooler's DISCARD ALL would
        cursor.execute("DEALLOCATE ALL")
    assert [row[2] for row in committer.write(_records(project, ["after"]))] == ["after"]
    assert set(InboxItem.objects.values_list("event_id", flat=True)) == {"before", "after"}


def test_a_write_in_a_transaction_after_psycopgs_deallocate_all_prepares_again():
    """psycopg's ROLLBACK on a connection where it prepared statements (`ingest/prepared.py`)
    sends DEALLOCATE ALL, which drops the inbox insert too; a write inside a transaction then
    prepares it again instead of failing the caller's transaction."""
    project = project_with_key("ml-platform").project
    inbox_write.write(_records(project, ["before"]))  # prepared, outside a transaction
    fetch("SELECT %s::int", [1])  # psycopg now holds a prepared statement here
    with pytest.raises(RuntimeError), transaction.atomic():
        connection.cursor().execute("SELECT 1")
        raise RuntimeError  # the rollback deallocates everything on this connection
    with transaction.atomic():
        inside = inbox_write.write(_records(project, ["inside"]))
        after = inbox_write.write(_records(project, ["after"]))  # prepared: no second PREPARE
    assert [row.event_id for row in inside + after] == ["inside", "after"]
    assert set(InboxItem.objects.values_list("event_id", flat=True)) == {
        "before",
        "inside",
        "after",
    }


class _Stop(BaseException):
    """Not an Exception: what a thread's own end (SystemExit, KeyboardInterrupt) looks like."""


def test_a_leader_that_leaves_on_a_base_exception_hands_the_lead_on():
    """Each waiting request is woken alone (its own lock): when the leader's statement ends
    in a BaseException, the leader re-raises it and the requests queued behind it are still
    committed by the next leader it woke, none left waiting."""
    insert = CountingInsert()
    calls = []

    def failing_first(records, conn):
        calls.append(len(records))
        if len(calls) == 1:
            insert(records, conn)  # held at the gate while the others queue
            raise _Stop()
        return insert(records, conn)

    committer = Committer(failing_first, inbox_write.wake)
    project = project_with_key("ml-platform").project
    outcomes: dict[str, object] = {}

    def request(name: str) -> None:
        try:
            outcomes[name] = committer.write(_records(project, [name]))
        except BaseException as exc:  # noqa: BLE001 - the test looks at what each one got
            outcomes[name] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=request, args=(n,)) for n in ("first", "a", "b", "c")]
    threads[0].start()
    assert insert.entered.wait(30)
    for thread in threads[1:]:
        thread.start()
    _queued(committer, 3)
    insert.gate.set()
    for thread in threads:
        thread.join(30)
    try:
        assert not any(thread.is_alive() for thread in threads)
        assert isinstance(outcomes["first"], _Stop)
        for name in ("a", "b", "c"):
            assert [row[2] for row in outcomes[name]] == [name]
        assert calls == [1, 3]  # the three queued behind it, in one statement
        assert set(InboxItem.objects.values_list("event_id", flat=True)) >= {"a", "b", "c"}
        assert not committer._busy and not committer._queue
    finally:
        committer.close()
