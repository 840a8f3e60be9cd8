"""Beat's scheduler builds a new broker connection after a send failed (webapp/beat.py).

Celery's own keeps its first producer for good, so after a broker restart every periodic
send (the sweep among them) failed until the worker restarted. The real restart is in
tests/integration/test_beat_after_database_restart.py; this is the rule, in-process.
"""

from __future__ import annotations

import pytest
from celery import Celery
from celery.beat import ScheduleEntry, SchedulingError

from webapp.beat import ReconnectingScheduler


def test_a_failed_send_drops_the_connection_and_the_next_one_uses_a_new_one(tmp_path):
    app = Celery(broker="memory://", set_as_current=False)
    producers = []

    def send_task(name, args=None, kwargs=None, producer=None, **options):
        producers.append(producer)
        if len(producers) == 1:
            raise ConnectionError("channel disconnected")  # as kombu's, on a closed channel

    app.send_task = send_task
    scheduler = ReconnectingScheduler(app, schedule_filename=str(tmp_path / "beat"), lazy=True)
    entry = ScheduleEntry(name="sweep", task="rca.tasks.sweep_stuck_analyses", schedule=5, app=app)
    first, connection = scheduler.producer, scheduler.connection

    with pytest.raises(SchedulingError):
        scheduler.apply_async(entry, producer=scheduler.producer, advance=False)
    scheduler.apply_async(entry, producer=scheduler.producer, advance=False)

    assert producers[0] is first
    assert producers[1] is not first  # built again, on a new connection
    assert scheduler.connection is not connection
    assert producers[1].connection is scheduler.connection


def test_a_send_that_works_keeps_the_connection(tmp_path):
    app = Celery(broker="memory://", set_as_current=False)
    app.send_task = lambda *args, **kwargs: None
    scheduler = ReconnectingScheduler(app, schedule_filename=str(tmp_path / "beat"), lazy=True)
    entry = ScheduleEntry(name="sweep", task="rca.tasks.sweep_stuck_analyses", schedule=5, app=app)
    first = scheduler.producer

    scheduler.apply_async(entry, producer=first, advance=False)

    assert scheduler.producer is first
