"""An incident whose analysis always crashes is tried a bounded number of times, then shown failed.

Real failures, real processes: a private `celery worker` whose embedding model path does
not exist (every analysis raises FileNotFoundError while embedding, as it would for an
operator's typo), and workers SIGKILLed mid-analysis. Both run on a private Redis broker
(tests/support/redis_broker.py) so the test's sweeps and retries reach only them.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
import requests
from django.db import connection
from django.urls import reverse

from ingest.models import Incident
from rca.models import Analysis
from rca.queue.claim import WORKER_LOST
from rca.queue.sweeper import sweep
from tests.support.corpus import store_embedded_runbooks
from tests.support.factories import project_with_key, shape_error
from tests.support.processes import ANALYSED, Worker, wait_for
from tests.support.redis_broker import RedisServer, private_redis
from tests.support.ui import member

pytestmark = pytest.mark.django_db(transaction=True)

#: A directory name that would be markup if the UI did not escape our error text.
MISSING_MODEL = "<img src=x onerror=alert(1)>"


@pytest.fixture(autouse=True)
def corpus(transactional_db):
    store_embedded_runbooks()


@pytest.fixture
def redis(tmp_path) -> Iterator[RedisServer]:
    """A private broker for this test's workers (named `redis`: tests with it run workers)."""
    with private_redis(tmp_path) as server:
        yield server


@pytest.fixture
def tenant():
    return project_with_key("poison")


def post(live_server, tenant) -> int:
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents",
        json=shape_error(batch=4),
        headers=tenant.auth,
        timeout=10,
    )
    assert resp.status_code == 202, resp.text
    return resp.json()["incident_id"]


def incident(incident_id: int) -> Incident:
    return Incident.objects.get(pk=incident_id)


def status(incident_id: int) -> str:
    return incident(incident_id).analysis_status


def test_an_analysis_that_always_crashes_fails_after_three_attempts_and_says_why(
    live_server, tenant, redis, tmp_path, client
):
    from rca.queue.tasks import analyse_incident

    missing = tmp_path / MISSING_MODEL
    crashing = Worker(
        dict(connection.settings_dict),
        redis.url,
        tmp_path,
        extra_env={"RCA_EMBEDDING_MODEL": str(missing), "RCA_ANALYSIS_RETRY_BACKOFF": "0.2"},
    )
    try:
        crashing.wait_ready()
        incident_id = post(live_server, tenant)
        wait_for(lambda: status(incident_id) == "failed", timeout=180, interval=0.3)
        # The third attempt's task ends normally (the first two ended in a retry).
        wait_for(lambda: len(ANALYSED.findall(crashing.log())) == 1, timeout=30, interval=0.1)

        # A stray message (a duplicate, a late redelivery, even a forced one) changes nothing.
        analyse_incident.delay(incident_id)
        analyse_incident.delay(incident_id, force=True)
        wait_for(lambda: len(ANALYSED.findall(crashing.log())) == 3, timeout=60, interval=0.3)
    finally:
        crashing.stop()

    failed = incident(incident_id)
    assert (failed.analysis_status, failed.analysis_attempts) == ("failed", 3)
    assert failed.analysis_error.startswith("FileNotFoundError: "), failed.analysis_error
    assert MISSING_MODEL in failed.analysis_error
    assert (
        list(Analysis.objects.filter(incident_id=incident_id).values_list("status"))
        == [("failed",)] * 3
    )
    # Three runs of the task, each one attempt; retries came from the task, not the sweeper.
    assert crashing.log().count("Retry in") == 2, crashing.log()[-3000:]
    assert sweep(stuck_after=timedelta(0)) == []  # nothing left for the sweeper either

    # The API says so: per incident, and counted per project.
    shown = requests.get(
        f"{live_server.url}/api/v1/incidents/{incident_id}/analysis",
        headers=tenant.auth,
        timeout=5,
    ).json()
    assert shown["analysis_status"] == "failed"
    assert (shown["attempts"], shown["max_attempts"]) == (3, 3)
    assert shown["error"] == failed.analysis_error
    counts = requests.get(
        f"{live_server.url}/api/v1/analyses/status", headers=tenant.auth, timeout=5
    ).json()
    assert counts == {
        "project": "poison",
        "pending": 0,
        "analyzing": 0,
        "failed": 1,
        "max_attempts": 3,
    }

    # The issue page says it, escaped, and offers responders a fresh start.
    client.force_login(member(tenant.project, "alice"))
    page = client.get(f"{reverse('issue', args=[failed.issue_id])}?incident={incident_id}")
    html = page.content.decode()
    assert "Analysis failed after 3 attempts and will not be retried" in html
    assert "FileNotFoundError" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and MISSING_MODEL not in html
    assert reverse("reanalyse", args=[incident_id]) in html

    response = client.post(reverse("reanalyse", args=[incident_id]))
    assert response.status_code == 302
    assert incident(incident_id).analysis_attempts == 0

    # The operator fixed the model path: the re-analysis queued by the button succeeds.
    fixed = Worker(dict(connection.settings_dict), redis.url, tmp_path)
    try:
        fixed.wait_ready()
        wait_for(lambda: status(incident_id) == "done", timeout=120, interval=0.3)
    finally:
        fixed.stop()
    done = incident(incident_id)
    assert (done.analysis_attempts, done.analysis_error) == (1, "")
    assert Analysis.objects.filter(incident_id=incident_id, status="done").count() == 1


def start_and_kill_mid_analysis(redis, tmp_path, start) -> None:
    """Start a worker, let `start()` give it the incident, SIGKILL it once it has claimed."""
    env = {"RCA_ANALYSIS_MAX_ATTEMPTS": "2"}
    worker = Worker(dict(connection.settings_dict), redis.url, tmp_path, extra_env=env)
    try:
        worker.wait_ready()
        incident_id = start()
        # A fresh worker loads the embedding model after claiming: seconds in `analyzing`.
        wait_for(lambda: status(incident_id) == "analyzing", timeout=60, interval=0.02)
        worker.kill_process_tree()
    finally:
        worker.stop()


def test_a_worker_killed_mid_analysis_spends_an_attempt_and_the_sweeper_gives_up(
    live_server, tenant, redis, tmp_path, settings
):
    settings.RCA_ANALYSIS_MAX_ATTEMPTS = 2  # the sweeper runs here; the workers get it too
    incident_id = post(live_server, tenant)  # queued: the first worker to start takes it
    start_and_kill_mid_analysis(redis, tmp_path, lambda: incident_id)
    assert incident(incident_id).analysis_attempts == 1

    def resweep() -> int:
        assert sweep(stuck_after=timedelta(0)) == [incident_id]
        return incident_id

    start_and_kill_mid_analysis(redis, tmp_path, resweep)
    assert incident(incident_id).analysis_attempts == 2

    # Both attempts died with their worker: the sweeper marks it failed instead of a third.
    assert sweep(stuck_after=timedelta(0)) == []
    lost = incident(incident_id)
    assert (lost.analysis_status, lost.analysis_error) == ("failed", WORKER_LOST)
    analyses = Analysis.objects.filter(incident_id=incident_id)
    assert set(analyses.values_list("status", flat=True)) <= {"failed"}
