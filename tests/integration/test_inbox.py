"""Accept-then-process for real: the request answers once the incident is in the inbox, a
`manage.py process_inbox` subprocess stores it (issue 19, item 1).

Without RCA_INGEST_INLINE (`@pytest.mark.inbox`): the answers carry null ids until the
processor has run, retries answer 200 either way, nothing waiting in the inbox can be seen,
and a processor killed with SIGKILL loses nothing and stores nothing twice.
"""

from __future__ import annotations

import gzip
import json
import uuid

import pytest
import requests
from django.conf import settings
from django.db import connection

from ingest.inbox.runner import APPLICATION_NAME
from ingest.models import InboxItem, Incident, Issue
from tests.support.factories import project_with_key, shape_error
from tests.support.inbox import Processor
from tests.support.processes import wait_for
from tests.support.secret_samples import AWS_KEY, OPENAI_KEY

pytestmark = [pytest.mark.inbox, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _inbox_table(settings):
    """The inbox table's path (RCA_SPOOL_FIRST=false); the default, spool first, is
    tests/integration/test_json_spool_first.py's and test_sentry_spool_first.py's."""
    settings.RCA_SPOOL_FIRST = False


@pytest.fixture
def tenant():
    return project_with_key("inbox")


@pytest.fixture
def start_processor(tmp_path):
    started: list[Processor] = []

    def start(*options: str, env: dict[str, str] | None = None) -> Processor:
        log = tmp_path / f"p{len(started)}.log"
        proc = Processor(dict(connection.settings_dict), log, *options, env=env)
        started.append(proc)
        proc.wait_ready()
        return proc

    yield start
    for proc in started:
        proc.stop()
        print(f"--- {proc.log_path.name}\n{proc.log()[-3000:]}")  # shown when a test fails


def post(live_server, tenant, payload: dict, **headers: str) -> requests.Response:
    return requests.post(
        f"{live_server.url}/api/v1/incidents",
        json=payload,
        headers={**tenant.auth, **headers},
        timeout=10,
    )


def found(live_server, tenant, event_id: str) -> list[dict]:
    resp = requests.get(
        f"{live_server.url}/api/v1/incidents",
        params={"event_id": event_id},
        headers=tenant.auth,
        timeout=10,
    )
    assert resp.status_code == 200, resp.text
    return resp.json()["results"]


def test_answer_names_the_event_and_the_incident_is_found_by_it_once_processed(
    live_server, tenant, start_processor
):
    start_processor()
    resp = post(live_server, tenant, shape_error(batch=4))
    assert resp.status_code == 202, resp.text
    body = resp.json()
    assert body["incident_id"] is None and body["issue_id"] is None
    assert body["duplicate"] is False and len(body["event_id"]) == 32
    assert body["url"].endswith(f"/api/v1/incidents?event_id={body['event_id']}")

    [incident] = wait_for(lambda: found(live_server, tenant, body["event_id"]), timeout=20)
    assert incident["error_type"] == "RuntimeError" and incident["exceptions"]
    # The answer's url is the lookup a client can follow with its key.
    path = body["url"].removeprefix(settings.RCA_BASE_URL)
    listed = requests.get(live_server.url + path, headers=tenant.auth, timeout=10).json()
    assert [i["id"] for i in listed["results"]] == [incident["id"]]
    assert not InboxItem.objects.exists()  # removed once processed


def test_a_retry_answers_200_while_queued_and_with_ids_once_stored(
    live_server, tenant, start_processor
):
    payload = {**shape_error(batch=8), "event_id": str(uuid.uuid4()).upper()}
    first = post(live_server, tenant, payload)
    assert first.status_code == 202, first.text
    event_id = first.json()["event_id"]
    assert event_id == payload["event_id"].replace("-", "").lower()

    queued = post(live_server, tenant, payload)  # no processor yet: still in the inbox
    assert queued.status_code == 200, queued.text
    assert queued.json() == {**first.json(), "duplicate": True}
    assert InboxItem.objects.count() == 1  # queued once

    start_processor()
    [incident] = wait_for(lambda: found(live_server, tenant, event_id), timeout=20)
    stored = post(live_server, tenant, payload)
    assert stored.status_code == 200
    assert stored.json()["incident_id"] == incident["id"]
    assert stored.json()["issue_id"] == incident["issue_id"]
    assert stored.json()["url"].endswith(f"/issues/{incident['issue_id']}")
    assert stored.json()["duplicate"] is True
    assert Incident.objects.filter(project=tenant.project).count() == 1
    assert not InboxItem.objects.exists()


def test_nothing_waiting_in_the_inbox_is_visible_and_secrets_are_scrubbed_once_stored(
    live_server, tenant, start_processor, client
):
    from tests.support.ui import member

    payload = {
        **shape_error(batch=16),
        "message": f"auth failed with key {OPENAI_KEY}",
        "logs": [f"ERROR boto: using {AWS_KEY}"],
    }
    resp = post(live_server, tenant, payload)
    assert resp.status_code == 202
    event_id = resp.json()["event_id"]
    assert OPENAI_KEY not in resp.text  # the answer never echoes the payload

    # Waiting: no incident, no issue, in the API or the UI.
    assert found(live_server, tenant, event_id) == []
    issues = requests.get(f"{live_server.url}/api/v1/issues", headers=tenant.auth, timeout=10)
    assert issues.json()["count"] == 0
    client.force_login(member(tenant.project, "responder"))
    page = client.get("/")
    assert page.status_code == 200
    assert "mat1 and mat2" not in page.content.decode() and OPENAI_KEY not in page.content.decode()

    start_processor()
    [incident] = wait_for(lambda: found(live_server, tenant, event_id), timeout=20)
    text = json.dumps(incident)
    assert OPENAI_KEY not in text and AWS_KEY not in text
    issue = Issue.objects.get(pk=incident["issue_id"])
    shown = client.get(f"/issues/{issue.pk}").content.decode()
    assert "mat1 and mat2" in shown and OPENAI_KEY not in shown and AWS_KEY not in shown


def _envelope(event_id: str) -> bytes:
    event = {
        "event_id": event_id,
        "platform": "python",
        "level": "error",
        "exception": {
            "values": [
                {
                    "type": "RuntimeError",
                    "value": "CUDA out of memory. Tried to allocate 2.00 GiB",
                    "stacktrace": {
                        "frames": [
                            {"filename": "serve.py", "function": "predict", "lineno": 88},
                        ]
                    },
                }
            ]
        },
        "tags": {"service": "ranker"},
    }
    lines = [{"event_id": event_id}, {"type": "event"}, event]
    return gzip.compress(b"\n".join(json.dumps(x).encode() for x in lines))


def _send_envelope(live_server, tenant, event_id: str) -> requests.Response:
    project = tenant.project
    return requests.post(
        f"{live_server.url}/api/{project.pk}/envelope/",
        data=_envelope(event_id),
        headers={
            "Content-Type": "application/x-sentry-envelope",
            "Content-Encoding": "gzip",
            "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={project.sentry_key}",
        },
        timeout=10,
    )


def test_a_processor_killed_with_sigkill_loses_nothing_and_stores_nothing_twice(
    live_server, tenant, start_processor
):
    """Single, batch and Sentry envelope posts, accepted while the processor is down and
    while one is killed mid-work: every event id is stored exactly once in the end."""
    # Small claims, so that the kill very likely lands while a claim is open.
    first = start_processor("--batch", "5")
    first.kill()
    sent: set[str] = set()
    for batch in range(4):
        resp = post(live_server, tenant, {**shape_error(batch=batch + 1), "event_id": f"s-{batch}"})
        assert resp.status_code == 202, resp.text
        sent.add(resp.json()["event_id"])
    items = [
        {**shape_error(batch=b % 7 + 1, in_features=b), "event_id": f"b-{b}"} for b in range(300)
    ]
    for start in range(0, len(items), 100):
        resp = requests.post(
            f"{live_server.url}/api/v1/incidents/batch",
            json={"incidents": items[start : start + 100]},
            headers=tenant.auth,
            timeout=30,
        )
        assert resp.status_code == 202, resp.text
        assert resp.json()["accepted"] == 100
        assert all(r["incident_id"] is None for r in resp.json()["results"])
        sent |= {r["event_id"] for r in resp.json()["results"]}
    for _ in range(3):
        event_id = uuid.uuid4().hex
        resp = _send_envelope(live_server, tenant, event_id)
        assert resp.status_code == 200, resp.text
        assert resp.json()["id"] == event_id
        sent.add(event_id)
    assert InboxItem.objects.count() == len(sent) == 307

    second = start_processor("--batch", "5")
    wait_for(lambda: InboxItem.objects.count() < len(sent), timeout=20, interval=0.01)
    second.kill()  # mid-drain
    # A retry of everything while rows wait or are being stored: still queued once.
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents/batch",
        json={"incidents": items[:100]},
        headers=tenant.auth,
        timeout=30,
    )
    assert resp.status_code == 200, resp.text
    assert resp.json()["accepted"] == 0 and resp.json()["duplicates"] == 100

    start_processor()
    wait_for(lambda: not InboxItem.objects.exists(), timeout=60)
    stored = list(
        Incident.objects.filter(project=tenant.project).values_list("event_id", flat=True)
    )
    assert sorted(stored) == sorted(sent)  # every one, once
    assert sum(
        Issue.objects.filter(project=tenant.project).values_list("occurrence_count", flat=True)
    ) == len(sent)
    sentry = Incident.objects.filter(project=tenant.project, source="sentry")
    assert sentry.count() == 3 and all(i.exceptions for i in sentry)


def test_the_processor_stops_cleanly_on_sigterm_and_comes_back_after_losing_its_connection(
    live_server, tenant, start_processor
):
    proc = start_processor()

    # The database drops the processor's connection (a restart, a failover): it reconnects
    # and listens again, so the next incident is stored without waiting for a poll.
    def terminated() -> bool:  # its connection may open a moment after its "ready" line
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s",
                [APPLICATION_NAME],
            )
            return cursor.fetchall() == [(True,)]

    wait_for(terminated, timeout=15, interval=0.2)
    resp = post(live_server, tenant, shape_error(batch=2))
    assert resp.status_code == 202
    wait_for(lambda: found(live_server, tenant, resp.json()["event_id"]), timeout=60)
    assert "the database is away" in proc.log()

    proc.proc.terminate()
    assert proc.proc.wait(30) == 0
    assert "stopped" in proc.log()


def _metric(live_server, name: str) -> float:
    text = requests.get(f"{live_server.url}/metrics", timeout=10).text
    [line] = [
        ln for ln in text.splitlines() if ln.startswith(name + " ") or ln.startswith(name + "{")
    ]
    return float(line.rsplit(" ", 1)[1])


def test_waiting_incidents_and_their_age_show_on_metrics(live_server, tenant, start_processor):
    waiting = 'rootcause_inbox_depth{state="waiting"}'
    assert _metric(live_server, waiting) == 0
    for batch in (1, 2):
        assert post(live_server, tenant, shape_error(batch=batch)).status_code == 202
    assert _metric(live_server, waiting) == 2
    assert _metric(live_server, "rootcause_inbox_oldest_seconds") > 0
    start_processor()
    wait_for(lambda: _metric(live_server, waiting) == 0, timeout=20)
    assert _metric(live_server, "rootcause_inbox_oldest_seconds") == 0


def test_what_was_spooled_while_the_database_was_away_is_stored_once(
    live_server, tenant, start_processor, tmp_path, settings
):
    """Records as the accept spools them (ingest.spool, the real one), one of them twice
    (a client's retry during the outage) and one also re-sent once the database was back:
    the processor replays the spool and stores each event id once."""
    from ingest import spool
    from ingest.inbox.records import make_records

    settings.RCA_SPOOL_DIR = str(tmp_path / "spool")
    sent = [{**shape_error(batch=b + 1), "event_id": f"spooled-{b}"} for b in range(5)]
    spool.append(make_records(tenant.project.pk, "api", [*sent, sent[0]]))
    assert post(live_server, tenant, sent[1]).status_code == 202  # the database is back

    start_processor(env={"RCA_SPOOL_DIR": settings.RCA_SPOOL_DIR})
    wait_for(lambda: spool.count() == 0 and not InboxItem.objects.exists(), timeout=20)
    stored = Incident.objects.filter(project=tenant.project).values_list("event_id", flat=True)
    assert sorted(stored) == [f"spooled-{b}" for b in range(5)]
