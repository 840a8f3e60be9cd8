"""A Sentry envelope's request only accepts; the processor maps the event (issue 19).

Without RCA_INGEST_INLINE the inbox holds the event as the mapping reads it (an SDK's
`modules` and `extra` left out, the id as it will be stored), a retry is answered 200 while
it waits, and processing stores it as the request used to: a `sentry` incident with its
exception, frames and tags, scrubbed.
"""

from __future__ import annotations

import gzip
import json

import pytest

from ingest.inbox.process import process_pending
from ingest.models import InboxItem, Incident
from tests.support.factories import project_with_key
from tests.support.secret_samples import OPENAI_KEY

pytestmark = [pytest.mark.inbox, pytest.mark.django_db(transaction=True)]

EVENT_ID = "6B7D9E0A-1C2F-4A3B-8D4E-5F6A7B8C9D0E"


@pytest.fixture(autouse=True)
def _inbox_table(settings):
    settings.RCA_SPOOL_FIRST = False
    settings.RCA_SENTRY_SPOOL_FIRST = False


def _envelope() -> bytes:
    event = {
        "event_id": EVENT_ID,
        "platform": "python",
        "exception": {
            "values": [
                {
                    "type": "RuntimeError",
                    "value": f"CUDA out of memory. Tried to allocate 2.00 GiB (key {OPENAI_KEY})",
                    "stacktrace": {
                        "frames": [{"filename": "serve.py", "function": "predict", "lineno": 88}]
                    },
                }
            ]
        },
        "tags": {"service": "ranker"},
        "modules": {"torch": "2.4.0", "vllm": "0.6.3"},
        "extra": {"sys.argv": ["serve.py", "--port", "8000"]},
    }
    lines = [{"event_id": EVENT_ID}, {"type": "event"}, event]
    return gzip.compress(b"\n".join(json.dumps(x).encode() for x in lines))


def _post(client, project):
    return client.post(
        f"/api/{project.pk}/envelope/",
        _envelope(),
        content_type="application/x-sentry-envelope",
        HTTP_CONTENT_ENCODING="gzip",
        HTTP_X_SENTRY_AUTH=f"Sentry sentry_version=7, sentry_key={project.sentry_key}",
    )


def test_the_request_queues_the_event_and_the_processor_maps_and_stores_it(client):
    project = project_with_key("deferred").project
    first, retry = _post(client, project), _post(client, project)
    assert first.status_code == retry.status_code == 200
    assert first.json()["id"] == retry.json()["id"] == EVENT_ID.replace("-", "").lower()

    [row] = InboxItem.objects.all()
    assert row.source == "sentry-raw" and row.event_id == first.json()["id"]
    assert "modules" not in row.payload and "extra" not in row.payload
    assert not Incident.objects.exists()

    assert process_pending() == 1
    assert not InboxItem.objects.exists()
    incident = Incident.objects.get()
    assert incident.source == "sentry" and incident.event_id == first.json()["id"]
    assert incident.error_type == "RuntimeError" and incident.service == "ranker"
    assert "CUDA out of memory" in incident.message and OPENAI_KEY not in incident.message
    assert incident.tags["platform"] == "python"
    assert _post(client, project).status_code == 200  # a retry once stored: still one
    assert process_pending() == 0 and Incident.objects.count() == 1
