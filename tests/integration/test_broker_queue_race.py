"""Processes that declare the same new queue at once on the embedded broker all start.

`make run` starts the general and the fresh worker together, both consuming the fresh
queue; on a new database kombu's get-or-create raced across them and the loser exited
with a unique violation on `kombu_queue.name` (webapp/broker_queues.py). Real processes,
a real PostgreSQL, released at one barrier.
"""

from __future__ import annotations

import multiprocessing
import uuid

import pytest
from django.db import connection

PROCESSES = 6
ROUNDS = 3


def _declare(url: str, queue: str, barrier, results) -> None:
    from kombu import Connection

    from webapp.broker_queues import make_queue_creation_race_safe

    make_queue_creation_race_safe()
    with Connection(url) as conn:
        channel = conn.default_channel
        channel.session  # noqa: B018 - connect before the barrier
        barrier.wait(30)
        try:
            channel._new_queue(queue)
            results.put("ok")
        except Exception as exc:  # the failure the worker died of, reported to the test
            results.put(f"{type(exc).__name__}: {exc}"[:300])


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(240)
def test_processes_declaring_one_new_queue_at_once_all_succeed(broker_url):
    from kombu import Connection

    with Connection(broker_url) as conn:  # the broker's tables, once (their DDL races too)
        conn.default_channel.session  # noqa: B018
    ctx = multiprocessing.get_context("spawn")
    for _ in range(ROUNDS):
        queue = f"race-{uuid.uuid4().hex[:8]}"
        barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
        procs = [
            ctx.Process(target=_declare, args=(broker_url, queue, barrier, results))
            for _ in range(PROCESSES)
        ]
        for proc in procs:
            proc.start()
        answers = [results.get(timeout=120) for _ in procs]
        for proc in procs:
            proc.join(30)
        assert answers == ["ok"] * PROCESSES, answers
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM kombu_queue WHERE name = %s", [queue])
            assert cursor.fetchone()[0] == 1
