"""One-incident JSON posts spooled first (RCA_SPOOL_FIRST, ingest/inbox/spool_first.py and
claims.py), with real processes: gunicorn (two workers, as `make run`) and
`manage.py process_inbox`.

The web writes nothing to the database for them; the answer keeps its fields (202, ids
not known yet). A retry answers 200 (`duplicate: true`) whichever worker process it
reaches, while the first copy waits in the spool and once it is stored (with its ids
then). The web server and a processor mid-drain killed with SIGKILL lose nothing and
store nothing twice.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.integration.test_spool_outage import stored
from tests.support.processes import wait_for
from tests.support.secret_samples import OPENAI_KEY
from tests.support.spool_first_stack import inbox_rows, kill_group, spool_first_stack, spooled

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def stack(tmp_path):
    """Gunicorn spooling first (`start_web` starts another); processors on demand."""
    settings = {
        "RCA_SPOOL_FIRST": "true",
        "RCA_RATE_LIMIT_PER_MINUTE": "600000",
        "RCA_RATE_LIMIT_BURST": "10000",
    }
    with spool_first_stack(tmp_path, "json-spool-first", settings) as stack:
        yield stack


def post(stack, event_id: str) -> requests.Response:
    """One incident; a connection of its own each time (gunicorn's two workers take turns
    at accepting connections, so copies of one event id reach both)."""
    return requests.post(
        f"{stack['url']}/api/v1/incidents",
        json={
            "event_id": event_id,
            "service": "trainer",
            "error_type": "RuntimeError",
            "message": f"CUDA out of memory. Tried to allocate 2.00 GiB; key {OPENAI_KEY}",
        },
        headers={"Authorization": f"Bearer {stack['used']}", "Connection": "close"},
        timeout=30,
    )


def _claims(stack) -> list[str]:
    folder = stack["spool"] / "claims"
    return [p.name for p in folder.iterdir() if not p.name.startswith(".")]


def _all_stored(stack, event_ids: list[str]) -> dict[str, int] | None:
    found = stored(stack["uri"], event_ids)
    return found if len(found) == len(event_ids) else None


def _writers(stack) -> set[str]:
    """The pids of the processes that wrote the spool's files (named `<ns>-<host>-<pid>`)."""
    return {re.sub(r".*-", "", p.stem) for p in stack["spool"].glob("*.spool")}


def _post_copies_at_once(stack, event_ids: list[str]) -> None:
    """Each event id sent 4 times at once: one copy spooled (202), three retries (200)."""
    copies = [e for e in event_ids for _ in range(4)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda e: post(stack, e), copies))
    per_event: dict[str, Counter] = {e: Counter() for e in event_ids}
    for event_id, answer in zip(copies, answers, strict=True):
        body = answer.json()
        assert body["event_id"] == event_id, body
        per_event[event_id][(answer.status_code, body["duplicate"])] += 1
        if answer.status_code == 202:  # the answer's fields: ids not known yet
            assert body["incident_id"] is None and body["issue_id"] is None
            assert body["url"].endswith(f"/api/v1/incidents?event_id={event_id}")
    assert all(c == Counter({(202, False): 1, (200, True): 3}) for c in per_event.values())


def test_retries_answer_200_in_either_worker_while_spooled_and_once_stored(stack):
    # Which worker accepts a connection is the kernel's choice; on a busy machine one may
    # take a whole round, so rounds go on until both worker processes have spooled.
    event_ids: list[str] = []
    for _ in range(6):
        batch = [uuid.uuid4().hex for _ in range(24)]
        _post_copies_at_once(stack, batch)
        event_ids += batch
        if len(_writers(stack)) == 2:
            break
    assert len(_writers(stack)) == 2  # both worker processes accepted incidents

    # Spooled, not stored, nothing in the database; one record per event id.
    assert spooled(stack["spool"]) == len(event_ids)
    assert inbox_rows(stack["uri"]) == 0
    assert stored(stack["uri"], event_ids) == {}
    assert len(_claims(stack)) == len(event_ids)
    later = [post(stack, event_ids[0]) for _ in range(6)]  # new connections, either worker
    assert [(r.status_code, r.json()["duplicate"]) for r in later] == [(200, True)] * 6

    stack["start_processor"]()
    found = wait_for(lambda: _all_stored(stack, event_ids), 60, 0.1)
    assert set(found.values()) == {1}
    wait_for(lambda: not _claims(stack), 30, 0.1)  # released after the commit that stored
    with ThreadPoolExecutor(8) as pool:
        retries = list(pool.map(lambda e: post(stack, e), event_ids * 2))
    assert {r.status_code for r in retries} == {200}
    assert all(r.json()["duplicate"] and r.json()["incident_id"] for r in retries)
    assert not _claims(stack) and spooled(stack["spool"]) == 0  # the database answered
    # Nothing unscrubbed was stored: the processor scrubbed from the spool as it stores.
    [incident] = requests_incident(stack, event_ids[0])
    assert "CUDA out of memory" in incident["message"] and OPENAI_KEY not in json.dumps(incident)


def requests_incident(stack, event_id: str) -> list[dict]:
    answer = requests.get(
        f"{stack['url']}/api/v1/incidents",
        params={"event_id": event_id},
        headers={"Authorization": f"Bearer {stack['used']}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text[:300]
    return answer.json()["results"]


def test_sigkill_of_web_and_processor_loses_nothing_and_stores_once(stack):
    event_ids = [uuid.uuid4().hex for _ in range(40)]
    with ThreadPoolExecutor(8) as pool:  # concurrent: appends share fdatasyncs
        answers = list(pool.map(lambda e: post(stack, e), event_ids))
    assert [a.status_code for a in answers] == [202] * 40, answers[0].text[:300]
    retried = post(stack, event_ids[0])
    assert (retried.status_code, retried.json()["duplicate"]) == (200, True)
    assert inbox_rows(stack["uri"]) == 0 and stored(stack["uri"], event_ids) == {}
    kill_group(stack["web"])  # after its answers: what it acknowledged is in the files

    first = stack["start_processor"]("--batch", "3")  # a transaction per 3 records
    wait_for(lambda: len(stored(stack["uri"], event_ids)) >= 3, 60, 0.01)
    first.proc.kill()  # mid-drain, very likely inside a transaction
    first.proc.wait(10)
    stack["start_processor"]("--batch", "7")
    found = wait_for(lambda: _all_stored(stack, event_ids), 60, 0.2)
    assert set(found.values()) == {1}  # exactly once each
    wait_for(lambda: not list(stack["spool"].glob("*.spool")), 30, 0.2)
    wait_for(lambda: not _claims(stack), 30, 0.2)
    assert inbox_rows(stack["uri"]) == 0

    stack["start_web"]()  # a retry after all that: the database answers 200
    again = post(stack, event_ids[-1])
    assert again.status_code == 200 and again.json()["duplicate"], again.text[:300]
    assert again.json()["incident_id"] is not None
