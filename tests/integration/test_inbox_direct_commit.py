"""The inbox write of gunicorn workers by default (ingest/inbox/write.py, `enable_direct_commit`):
each request thread inserts on its own connection, autocommitted, so its rows are durable
and visible to the processor when `write` returns; a retried event id is not queued twice;
and a connection the database dropped while idle costs the next request nothing (it is
pinged and replaced, not failed: a failure would spool the request's records)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection

from ingest.inbox import write as inbox_write
from ingest.inbox.records import make_records
from ingest.models import InboxItem
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def direct(monkeypatch) -> Iterator[None]:
    monkeypatch.setattr(inbox_write, "_committer", None)
    monkeypatch.setattr(inbox_write, "_direct", True)
    yield


def _records(project, ids: list[str]):
    return make_records(project.pk, "api", [{**shape_error(8), "event_id": i} for i in ids])


def _committed_ids(project) -> set[str]:
    """Event ids in the inbox as another session sees them (committed rows only)."""
    db = connection.settings_dict
    with psycopg.connect(
        dbname=db["NAME"],
        user=db["USER"],
        host=db["HOST"],
        port=db.get("PORT") or None,
        password=db.get("PASSWORD") or None,
        autocommit=True,
    ) as other:
        rows = other.execute(
            f"SELECT event_id FROM {InboxItem._meta.db_table} WHERE project_id = %s",  # noqa: S608
            [project.pk],
        ).fetchall()
    return {r[0] for r in rows}


def test_concurrent_writes_are_committed_each_once_when_write_returns(direct):
    project = project_with_key("ml-platform").project
    results: dict[int, list] = {}
    seen_at_return: dict[int, set[str]] = {}

    def request(n: int) -> None:
        try:
            ids = [f"r{n}"] if n % 3 else [f"r{n}", "shared"]  # "shared": one request wins
            results[n] = inbox_write.write(_records(project, ids))
            seen_at_return[n] = _committed_ids(project)
        finally:
            connection.close()

    threads = [threading.Thread(target=request, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(results) == 12
    for n, rows in results.items():
        own = {row.event_id for row in rows}
        assert f"r{n}" in own and own <= {f"r{n}", "shared"}
        assert own <= seen_at_return[n]  # durable and visible before the request answers
    assert sum("shared" in {row.event_id for row in rows} for rows in results.values()) == 1
    assert InboxItem.objects.filter(project=project).count() == 13
    assert inbox_write.write(_records(project, ["r1"])) == []  # a retry queues nothing


def test_a_connection_dropped_while_idle_is_replaced_not_failed(direct, monkeypatch):
    project = project_with_key("ml-platform").project
    assert [r.event_id for r in inbox_write.write(_records(project, ["before"]))] == ["before"]
    pid = connection.connection.info.backend_pid
    with psycopg.connect(connection.connection.info.dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
    monkeypatch.setattr(inbox_write, "IDLE_PING_SECONDS", 0.0)  # it has been idle long enough
    assert [r.event_id for r in inbox_write.write(_records(project, ["after"]))] == ["after"]
    assert connection.connection.info.backend_pid != pid
    assert _committed_ids(project) == {"before", "after"}
