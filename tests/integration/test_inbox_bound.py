"""The inbox is bounded (issue 19).

Past RCA_INBOX_MAX_ROWS waiting rows every ingest endpoint answers 429 with Retry-After and
accepts nothing; what was accepted before is stored once a processor runs, and then the
endpoints accept again.
"""

from __future__ import annotations

import uuid

import pytest
import requests
from django.db import connection

from ingest.models import InboxItem, Incident
from tests.integration.test_inbox import _send_envelope
from tests.support.factories import project_with_key, shape_error
from tests.support.inbox import Processor
from tests.support.processes import wait_for

pytestmark = [pytest.mark.inbox, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _inbox_table(settings):
    """The inbox table's path (RCA_SPOOL_FIRST=false); the default, spool first, is
    tests/integration/test_json_spool_first.py's and test_sentry_spool_first.py's."""
    settings.RCA_SPOOL_FIRST = False


BOUND = 3


@pytest.fixture
def tenant():
    return project_with_key("bounded")


@pytest.fixture
def bounded(settings):
    settings.RCA_INBOX_MAX_ROWS = BOUND
    settings.RCA_INBOX_BOUND_CHECK_MS = 0  # every request asks: the test needs no waiting


@pytest.fixture
def processor(tmp_path):
    started: list[Processor] = []

    def start() -> Processor:
        proc = Processor(dict(connection.settings_dict), tmp_path / "p.log")
        started.append(proc)
        proc.wait_ready()
        return proc

    yield start
    for proc in started:
        proc.stop()
        print(proc.log()[-3000:])


def post(live_server, tenant, event_id: str) -> requests.Response:
    return requests.post(
        f"{live_server.url}/api/v1/incidents",
        json={**shape_error(batch=8), "event_id": event_id},
        headers=tenant.auth,
        timeout=10,
    )


def test_past_the_bound_every_endpoint_refuses_with_retry_after_and_accepts_again_once_drained(
    live_server, tenant, bounded, processor
):
    accepted = [uuid.uuid4().hex for _ in range(BOUND + 1)]
    for event_id in accepted:  # no processor yet: they wait
        assert post(live_server, tenant, event_id).status_code == 202

    refused = uuid.uuid4().hex
    single = post(live_server, tenant, refused)
    batch = requests.post(
        f"{live_server.url}/api/v1/incidents/batch",
        json={"incidents": [shape_error(batch=16)]},
        headers=tenant.auth,
        timeout=10,
    )
    envelope = _send_envelope(live_server, tenant, uuid.uuid4().hex)
    for resp in (single, batch, envelope):
        assert resp.status_code == 429, resp.text
        assert int(resp.headers["Retry-After"]) > 0
    assert "retry later" in single.json()["detail"][0]["msg"]
    assert InboxItem.objects.count() == BOUND + 1  # nothing refused was accepted

    processor()
    wait_for(lambda: not InboxItem.objects.exists())
    stored = set(Incident.objects.values_list("event_id", flat=True))
    assert stored == set(accepted)  # everything accepted, nothing lost

    again = post(live_server, tenant, refused)  # the refused one, sent again: a new incident
    assert again.status_code == 202, again.text
    wait_for(lambda: Incident.objects.filter(event_id=refused).exists())


def test_a_retry_of_an_accepted_incident_is_refused_too_while_the_inbox_is_full(
    live_server, tenant, bounded
):
    first = uuid.uuid4().hex
    assert post(live_server, tenant, first).status_code == 202
    for _ in range(BOUND):
        assert post(live_server, tenant, uuid.uuid4().hex).status_code == 202
    retry = post(live_server, tenant, first)
    assert retry.status_code == 429  # still queued once: the retry changed nothing
    assert InboxItem.objects.filter(event_id=first).count() == 1


def test_without_a_bound_nothing_is_refused(live_server, tenant, settings):
    settings.RCA_INBOX_MAX_ROWS = 0
    settings.RCA_INBOX_BOUND_CHECK_MS = 0
    for _ in range(BOUND + 3):
        assert post(live_server, tenant, uuid.uuid4().hex).status_code == 202
