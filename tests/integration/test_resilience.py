"""Analysis survives the broker going down and workers dying, and never runs twice.

Real processes only: a private `redis-server` we can kill and restart, real `celery worker`
subprocesses (SIGKILLed where the test says so), incidents POSTed over HTTP.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from datetime import timedelta

import pytest
import requests
from django.db import connection
from django.utils import timezone

from ingest.models import Incident
from rca.models import Analysis, Suggestion
from rca.queue.sweeper import sweep
from tests.support.corpus import store_embedded_runbooks
from tests.support.factories import project_with_key, shape_error
from tests.support.processes import ANALYSED, Worker, wait_for
from tests.support.redis_broker import RedisServer, celery_broker, private_redis

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def redis(tmp_path) -> Iterator[RedisServer]:
    """A private broker, so killing it or a worker on it disturbs no other test."""
    with private_redis(tmp_path) as server:
        yield server


@pytest.fixture(autouse=True)
def corpus(transactional_db):
    """The bundled runbooks, embedded (the test process may load the model; the web may not)."""
    store_embedded_runbooks()


@pytest.fixture
def tenant():
    return project_with_key("resilience")


def _db() -> dict:
    return dict(connection.settings_dict)


def post(live_server, tenant, payload) -> int:
    # The timeout is the "answers quickly" check: a publish blocking on a dead broker
    # would hold the request far longer.
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents", json=payload, headers=tenant.auth, timeout=5
    )
    assert resp.status_code == 202, resp.text
    return resp.json()["incident_id"]


def statuses(ids: list[int]) -> dict[int, str]:
    return dict(Incident.objects.filter(pk__in=ids).values_list("pk", "analysis_status"))


def all_finished(ids: list[int]) -> bool:
    return all(s in ("done", "failed") for s in statuses(ids).values())


def assert_analysed_once(ids: list[int]) -> None:
    """Each incident: done, exactly one Analysis row (finished) and one Suggestion row."""
    assert set(statuses(ids).values()) == {"done"}, statuses(ids)
    for incident_id in ids:
        analyses = list(Analysis.objects.filter(incident_id=incident_id).values_list("status"))
        assert analyses == [("done",)], (incident_id, analyses)
        assert Suggestion.objects.filter(incident_id=incident_id).count() == 1, incident_id


#: Sweeper cutoffs for a worker of these tests (seconds instead of minutes): configuration
#: the worker reads from its environment, as an operator would set it.
QUICK_SWEEPER = {"RCA_ANALYSIS_PENDING_AFTER": "2", "RCA_ANALYSIS_STUCK_AFTER": "2"}
#: The sweep's log lines are DEBUG (routine housekeeping, webapp/celery.py): a worker whose
#: sweeps a test counts logs at DEBUG.
SWEEP_LOGLEVEL = "DEBUG"
SWEPT = re.compile(r"Task rca\.tasks\.sweep_stuck_analyses\[[^\]]+\] succeeded in [\d.]+s: (\d+)")


def sweep_as_beat_does() -> None:
    """Send the sweep task through the broker, as Celery beat does every minute.

    The worker runs it with its own settings (QUICK_SWEEPER); only beat's clock is skipped.
    """
    from webapp.celery import app

    app.send_task("rca.tasks.sweep_stuck_analyses")


#: A lease of seconds for a worker these tests kill (RCA_ANALYSIS_LEASE, default 30 s).
SHORT_LEASE = {"RCA_ANALYSIS_LEASE": "3"}


def lease_lapsed(ids: list[int]) -> bool:
    """True once no claim among `ids` holds a lease any more (its worker renews nothing)."""
    held = Incident.objects.filter(pk__in=ids, analysis_lease_until__gte=timezone.now())
    return not held.exists()


def last_change_older_than(ids: list[int], seconds: float) -> bool:
    """True once every unfinished incident of `ids` has sat still for `seconds`."""
    cutoff = timezone.now() - timedelta(seconds=seconds)
    waiting = Incident.objects.filter(pk__in=ids).exclude(analysis_status__in=["done", "failed"])
    return not waiting.filter(analysis_updated_at__gte=cutoff).exists()


def post_batch(live_server, tenant, payloads: list[dict]) -> list[int]:
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents/batch",
        json={"incidents": payloads},
        headers=tenant.auth,
        timeout=5,
    )
    assert resp.status_code == 202, resp.text
    return [item["incident_id"] for item in resp.json()["results"]]


def test_incidents_posted_while_the_broker_is_down_are_analysed_once_it_is_back(
    live_server, tenant, redis, tmp_path
):
    worker = Worker(_db(), redis.url, tmp_path)
    try:
        worker.wait_ready()
        redis.kill()

        ids = [post(live_server, tenant, shape_error(batch=i)) for i in range(1, 16)]
        ids += post_batch(live_server, tenant, [shape_error(batch=i) for i in range(16, 21)])
        assert len(set(ids)) == 20
        # Stored and accepted; nothing could be queued, so nothing has started.
        assert set(statuses(ids).values()) == {"pending"}

        redis.start()
        # No operator step and no sweep: the publisher re-sends what the broker refused as
        # soon as it answers again (rca/queue/publisher.py), each id once.
        wait_for(lambda: all_finished(ids), timeout=90, interval=0.3)
    finally:
        worker.stop()
    assert_analysed_once(ids)
    assert len(ANALYSED.findall(worker.log())) == 20, worker.log()[-3000:]


def test_two_workers_at_once_never_analyse_an_incident_twice(
    live_server, tenant, celery_worker, tmp_path, settings
):
    # Each request publishes its own message (no coalescing into a batch task): 50
    # messages for the two workers to race for.
    settings.RCA_PUBLISH_IN_BACKGROUND = False
    before = len(ANALYSED.findall(celery_worker.log()))
    second = Worker(_db(), settings.CELERY_BROKER_URL, tmp_path)
    try:
        second.wait_ready()
        # One issue, 50 different shape diffs: each occurrence needs an analysis of its own.
        ids = [post(live_server, tenant, shape_error(batch=i)) for i in range(1, 51)]
        wait_for(lambda: all_finished(ids), timeout=150, interval=0.5)
    finally:
        second.stop()

    assert_analysed_once(ids)
    by_first = len(ANALYSED.findall(celery_worker.log())) - before
    by_second = len(ANALYSED.findall(second.log()))
    assert by_first > 0 and by_second > 0, (by_first, by_second)
    assert by_first + by_second >= 50


@pytest.mark.queues_analyses
def test_a_broker_that_stops_answering_never_holds_an_ingest_request(live_server, tenant, settings):
    """The broker accepts connections and never answers (a hung Redis). Publishing happens
    after the response, so requests still answer at once; the sweeper sends the ids later."""
    from rca.queue.enqueue import background
    from webapp.celery import app

    settings.RCA_PUBLISH_IN_BACKGROUND = True
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)  # connections complete in the backlog; nothing ever reads them
    saved_options = app.conf.broker_transport_options
    # Longer than `post`'s 5 s timeout: a request that published itself would fail here.
    app.conf.broker_transport_options = {"socket_timeout": 30, "socket_connect_timeout": 30}
    try:
        with celery_broker(f"redis://127.0.0.1:{silent.getsockname()[1]}/0"):
            ids = [post(live_server, tenant, shape_error(batch=i)) for i in range(1, 6)]
            assert set(statuses(ids).values()) == {"pending"}
            silent.close()  # the hung connections are reset: the stuck publish gives up
            assert background().flush(60)
    finally:
        silent.close()
        app.conf.broker_transport_options = saved_options
    assert set(statuses(ids).values()) == {"pending"}  # kept for the sweeper, not lost


def test_incidents_queued_behind_a_worker_killed_mid_analysis_are_all_analysed_by_the_next(
    live_server, tenant, redis, tmp_path
):
    """kill -9 while one analysis runs and more wait in the queue; the dead worker stops
    renewing its lease, and once it lapses the next worker's own scheduled sweep takes the
    claim back: every incident ends analysed, the killed one finished exactly once.
    (A single killed incident swept by a direct `sweep()` call: test_poison_incidents.py;
    a live analysis keeping its lease: tests/unit/test_lease.py.)"""
    first = Worker(_db(), redis.url, tmp_path, extra_env=SHORT_LEASE)
    try:
        first.wait_ready()
        ids = [post(live_server, tenant, shape_error(batch=i)) for i in range(1, 7)]
        wait_for(lambda: "analyzing" in statuses(ids).values(), timeout=60, interval=0.02)
        first.kill_process_tree()
    finally:
        first.stop()
    killed = [pk for pk, status in statuses(ids).items() if status == "analyzing"]
    assert len(killed) == 1, statuses(ids)
    assert not all_finished(ids)
    assert not Suggestion.objects.filter(incident_id__in=killed).exists()

    second = Worker(_db(), redis.url, tmp_path, extra_env=QUICK_SWEEPER, loglevel=SWEEP_LOGLEVEL)
    try:
        second.wait_ready()
        # The dead worker never acked, and Redis would redeliver only after its visibility
        # timeout (an hour): the claim stays `analyzing` until its lease lapses.
        wait_for(lambda: lease_lapsed(killed), timeout=30, interval=0.2)
        assert statuses(killed) == {killed[0]: "analyzing"}
        sweep_as_beat_does()
        wait_for(lambda: all_finished(ids), timeout=120, interval=0.3)
    finally:
        second.stop()

    assert_analysed_once([pk for pk in ids if pk not in killed])
    # The killed attempt stays on record as a failed Analysis (worker lost); one finished.
    [killed_id] = killed
    assert statuses(killed) == {killed_id: "done"}
    assert Analysis.objects.filter(incident_id=killed_id, status="done").count() == 1
    assert Suggestion.objects.filter(incident_id=killed_id).count() == 1
    assert sum(int(n) for n in SWEPT.findall(second.log())) >= 1, second.log()[-3000:]
    assert sweep(stuck_after=timedelta(seconds=1)) == []  # nothing left behind


def own_issue(i: int) -> dict:
    """An error of an issue of its own: one queued message each (repeats of one issue would
    join its pending analysis and have no message to lose, rca/queue/coalesce.py)."""
    payload = shape_error(batch=i)
    payload["stacktrace"] = payload["stacktrace"].replace("model.py", f"model_{i}.py")
    return payload


def test_incidents_queued_when_the_broker_dies_and_loses_its_queue_are_still_analysed(
    live_server, tenant, redis, tmp_path
):
    """The broker dies with messages in its queue and comes back empty (no persistence):
    the rows are the truth, so the worker's scheduled sweep sends every message again."""
    worker = Worker(_db(), redis.url, tmp_path, extra_env=QUICK_SWEEPER, loglevel=SWEEP_LOGLEVEL)
    try:
        worker.wait_ready()
        ids = [post(live_server, tenant, own_issue(i)) for i in range(1, 4)]
        ids += post_batch(live_server, tenant, [own_issue(i) for i in range(4, 9)])
        wait_for(lambda: "analyzing" in statuses(ids).values(), timeout=60, interval=0.02)
        redis.kill()  # the queued messages die with it
        redis.start()
        assert redis.queued_messages() == 0
        assert "pending" in statuses(ids).values()  # accepted, and no message left to run it
        wait_for(lambda: last_change_older_than(ids, 2), timeout=60, interval=0.2)
        sweep_as_beat_does()
        wait_for(lambda: all_finished(ids), timeout=120, interval=0.3)
    finally:
        worker.stop()

    assert_analysed_once(ids)
    assert sum(int(n) for n in SWEPT.findall(worker.log())) >= 1, worker.log()[-3000:]
