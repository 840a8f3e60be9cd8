"""Sentry events spooled first (RCA_SENTRY_SPOOL_FIRST, ingest/inbox/spool_first.py), with
real processes: gunicorn (two workers, as `make run`) and `manage.py process_inbox`.

The web writes nothing to the database for them: they wait in the spool, invisible, and
the processor stores them from there. A processor killed with SIGKILL mid-drain, and the
web server killed with SIGKILL after answering, lose nothing and store nothing twice; a
retry of a spooled event is stored once; the inbox's bound counts spooled events.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.integration.test_spool_outage import post_envelope, stored
from tests.support.processes import wait_for
from tests.support.spool_first_stack import inbox_rows, kill_group, spool_first_stack, spooled

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def stack(tmp_path):
    """Gunicorn spooling Sentry events first; no processor yet (`start_processor`)."""
    settings = {
        "RCA_SENTRY_SPOOL_FIRST": "true",
        "RCA_INBOX_MAX_ROWS": "60",
        "RCA_INBOX_BOUND_CHECK_MS": "0",
    }
    with spool_first_stack(tmp_path, "spool-first", settings) as stack:
        yield stack


def test_spooled_events_survive_sigkill_of_web_and_processor_and_are_stored_once(stack):
    event_ids = [uuid.uuid4().hex for _ in range(40)]
    with ThreadPoolExecutor(8) as pool:  # concurrent: appends share fdatasyncs
        answers = list(pool.map(lambda e: post_envelope(stack, e), event_ids))
    assert [a.status_code for a in answers] == [200] * 40, answers[0].text[:300]
    assert [a.json()["id"] for a in answers] == event_ids
    retried = post_envelope(stack, event_ids[0])  # a client's retry: answered as the first
    assert retried.status_code == 200 and retried.json()["id"] == event_ids[0]

    # Nothing was written to the database: no inbox row, nothing stored or visible yet.
    assert inbox_rows(stack["uri"]) == 0
    assert stored(stack["uri"], event_ids) == {}
    assert spooled(stack["spool"]) == 41
    kill_group(stack["web"])  # after its answers: what it acknowledged is in the files

    first = stack["start_processor"]("--batch", "3")  # a transaction per 3 records
    wait_for(lambda: len(stored(stack["uri"], event_ids)) >= 3, 60, 0.01)
    first.proc.kill()  # mid-drain, very likely inside a transaction
    first.proc.wait(10)
    stack["start_processor"]("--batch", "7")

    def all_stored() -> dict[str, int] | None:
        found = stored(stack["uri"], event_ids)
        return found if len(found) == len(event_ids) else None

    found = wait_for(all_stored, 60, 0.2)
    assert set(found.values()) == {1}  # exactly once each, the retry included
    wait_for(lambda: not list(stack["spool"].glob("*.spool")), 30, 0.2)
    assert inbox_rows(stack["uri"]) == 0


def test_spooled_events_count_toward_the_inbox_bound(stack):
    """No processor: the spool grows; past RCA_INBOX_MAX_ROWS (60 here) the endpoint
    answers 429 with Retry-After and spools nothing more."""
    answers = [post_envelope(stack, uuid.uuid4().hex) for _ in range(61)]
    assert [a.status_code for a in answers] == [200] * 61
    refused = post_envelope(stack, uuid.uuid4().hex)
    assert refused.status_code == 429, refused.text[:300]
    assert int(refused.headers["Retry-After"]) > 0
    assert spooled(stack["spool"]) == 61
    stack["start_processor"]()
    wait_for(lambda: not list(stack["spool"].glob("*.spool")), 60, 0.2)
    assert post_envelope(stack, uuid.uuid4().hex).status_code == 200
