"""A real database outage: PostgreSQL killed with SIGKILL under gunicorn and the inbox
processor, ingest answering from the spool, then every accepted incident stored once.

The stack runs on a PostgreSQL cluster of its own (its own RCA_DATA_DIR, as `make run`
makes it), so killing it leaves the test session's database alone. gunicorn has two
workers, as `make run` starts it: which one answers must not matter.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import psycopg
import pytest
import requests

from tests.integration.test_metrics import parse, value
from tests.integration.test_sentry_corpus import envelope_bytes
from tests.support.factories import shape_error
from tests.support.gunicorn import free_port
from tests.support.processes import LoggedProcess, python, wait_for
from webapp import embedded
from webapp.supervisor import gunicorn_argv

pytestmark = pytest.mark.timeout(420)

SETUP = """
import json
from ingest.keys import create_key
from ingest.models import Project
project = Project.objects.create(name="Outage", slug="outage")
_, used = create_key(project, "used")
_, unused = create_key(project, "unused")
print(json.dumps({"project": project.pk, "dsn_key": project.sentry_key, "used": used,
                  "unused": unused}))
"""


class Served(LoggedProcess):
    """gunicorn or the inbox processor on the outage cluster."""

    def __init__(self, argv: list[str], log_path: Path, env: dict[str, str], ready: str) -> None:
        self.ready_text = ready
        self.what = argv[2]
        super().__init__(argv, log_path, env)

    def ready(self) -> bool:
        return self.ready_text in self.log()


@pytest.fixture
def stack(tmp_path):
    data = tmp_path / "data"
    base_env = {"RCA_DATA_DIR": str(data), "SECRET_KEY": "outage-test-" + "x" * 40}
    uri = python(base_env, "-c", "from webapp import embedded; print(embedded.database_url())")
    env = {
        **base_env,
        "DATABASE_URL": uri.strip().splitlines()[-1],
        "CELERY_BROKER_URL": "memory://",  # analyses are not this test's subject
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "RCA_SPOOL_MAX_BYTES": "40000",
        "RCA_SPOOL_FIRST": "false",  # spooled only while the database is away
        "RCA_KEY_CACHE_RELOAD_SECONDS": "1",
        "RCA_INBOX_POLL": "0.5",
        "RCA_INGEST_INLINE": "false",
    }
    (tmp_path / "metrics").mkdir()
    stopping: list[LoggedProcess] = []
    try:
        python(env, "manage.py", "migrate", "--no-input", "-v", "0")
        ids = json.loads(python(env, "manage.py", "shell", "-c", SETUP).strip().splitlines()[-1])
        port = free_port()
        web = Served(
            gunicorn_argv(port, "--log-level", "info"), tmp_path / "web.log", env, "Booting worker"
        )
        stopping.append(web)
        processor = Served(
            [sys.executable, "manage.py", "process_inbox"],
            tmp_path / "processor.log",
            env,
            "processing the inbox",
        )
        stopping.append(processor)
        web.wait_ready()
        processor.wait_ready()
        wait_for(lambda: _answers(f"http://127.0.0.1:{port}/healthz"), 30)
        yield {
            **ids,
            "url": f"http://127.0.0.1:{port}",
            "uri": env["DATABASE_URL"],
            "pgdata": data / "pg",
            "env": env,
            "spool": data / "spool",
        }
    finally:
        for proc in stopping:
            proc.stop()
        python(base_env, "-c", "from webapp import embedded; embedded.stop()")


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def incident(tag: str) -> dict:
    return {**shape_error(8), "event_id": f"{tag}-{uuid.uuid4().hex[:12]}"}


def post_single(stack, key: str, body: dict) -> requests.Response:
    return requests.post(
        f"{stack['url']}/api/v1/incidents",
        json=body,
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )


def post_envelope(stack, event_id: str) -> requests.Response:
    event = {"exception": {"values": [{"type": "ValueError", "value": "bad batch"}]}}
    body = envelope_bytes({"event_id": event_id}, [({"type": "event"}, event)])
    return requests.post(
        f"{stack['url']}/api/{stack['project']}/envelope/",
        data=body,
        headers={
            "Content-Type": "application/x-sentry-envelope",
            "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={stack['dsn_key']}",
        },
        timeout=10,
    )


def assert_503_json(response: requests.Response) -> None:
    assert response.status_code == 503, response.text[:500]
    assert response.headers["Content-Type"].startswith("application/json")
    assert int(response.headers["Retry-After"]) > 0
    assert response.json()["detail"][0]["msg"]


def stored(uri: str, event_ids: list[str]) -> dict[str, int]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            "SELECT event_id, count(*) FROM ingest_incident WHERE event_id = ANY(%s)"
            " GROUP BY event_id",
            [event_ids],
        ).fetchall()
    return dict(rows)


#: Start the killed cluster again, as `make run`'s supervisor does.
RESTART = (
    "from webapp import embedded; "
    "embedded._wait_for_reaping(embedded.data_dir()); embedded.ensure_running()"
)


def kill_postgres(pgdata: Path, uri: str) -> None:
    pid = embedded.postmaster_pid(pgdata)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)

    def refused() -> bool:
        try:
            psycopg.connect(uri, connect_timeout=2).close()
        except psycopg.OperationalError:
            return True
        return False

    wait_for(refused, 30, 0.2)


def test_accepted_during_a_postgres_outage_is_stored_exactly_once_after_it(stack):
    accepted: list[str] = []
    # Before the outage: the key and the DSN are used (and both web workers reload them).
    before = incident("before")
    assert post_single(stack, stack["used"], before).status_code == 202
    assert post_envelope(stack, "a" * 32).status_code == 200
    accepted += [before["event_id"], "a" * 32]
    wait_for(lambda: len(stored(stack["uri"], accepted)) == 2, 30)
    time.sleep(2.5)  # a reload interval (1 s) for each web worker, and some

    kill_postgres(stack["pgdata"], stack["uri"])
    for _ in range(4):  # several, so both gunicorn workers answer some
        body = incident("single")
        answer = post_single(stack, stack["used"], body)
        assert answer.status_code == 202, answer.text[:500]
        accepted.append(body["event_id"])
    batch = [incident("batch") for _ in range(3)]
    answer = requests.post(
        f"{stack['url']}/api/v1/incidents/batch",
        json={"incidents": batch},
        headers={"Authorization": f"Bearer {stack['used']}"},
        timeout=10,
    )
    assert answer.status_code == 202, answer.text[:500]
    accepted += [b["event_id"] for b in batch]
    for _ in range(2):
        event_id = uuid.uuid4().hex
        answer = post_envelope(stack, event_id)
        assert answer.status_code == 200, answer.text[:500]
        assert answer.json()["id"] == event_id
        accepted.append(event_id)

    # A valid key never used: it may be valid, so neither 202 nor 401.
    assert_503_json(post_single(stack, stack["unused"], incident("unused")))
    # A read cannot be served: JSON, not Django's HTML error page.
    read = requests.get(
        f"{stack['url']}/api/v1/incidents",
        headers={"Authorization": f"Bearer {stack['used']}"},
        timeout=10,
    )
    assert_503_json(read)

    # Until the spool (40 kB here) is full; then 503 with Retry-After, and nothing kept.
    refused = None
    for _ in range(60):
        body = incident("fill")
        answer = post_single(stack, stack["used"], body)
        if answer.status_code != 202:
            refused = answer
            break
        accepted.append(body["event_id"])
    assert refused is not None, "the spool never filled"
    assert_503_json(refused)
    assert "spool is full" in refused.json()["detail"][0]["msg"]
    spooled_ids = accepted[2:]

    python({"RCA_DATA_DIR": str(stack["pgdata"].parent)}, "-c", RESTART)

    def all_stored() -> dict[str, int] | None:
        found = stored(stack["uri"], accepted)
        return found if len(found) == len(accepted) else None

    found = wait_for(all_stored, 90, 0.5)
    assert set(found) == set(accepted)
    assert set(found.values()) == {1}  # exactly once each
    assert not list(stack["spool"].glob("*.spool"))

    samples = parse(requests.get(f"{stack['url']}/metrics", timeout=10).text)
    assert value(samples, "rootcause_spooled_incidents_total") == len(spooled_ids)
    assert value(samples, "rootcause_replayed_incidents_total") >= len(spooled_ids)
    assert value(samples, "rootcause_spool_records") == 0
