"""POST /api/v1/incidents/batch over real HTTP: many incidents, each accepted or refused alone."""

from __future__ import annotations

import pytest
import requests

from ingest.models import Incident, Issue
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)

OOM = {
    "service": "ranker",
    "error_type": "torch.OutOfMemoryError",
    "message": "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 39.59 GiB total)",
}


@pytest.fixture
def tenant():
    return project_with_key()


def post_batch(live_server, tenant, incidents, **headers):
    return requests.post(
        f"{live_server.url}/api/v1/incidents/batch",
        json={"incidents": incidents},
        headers={**tenant.auth, **headers},
        timeout=20,
    )


def test_batch_groups_like_single_posts_and_reports_each_item(live_server, tenant):
    resp = post_batch(live_server, tenant, [shape_error(4), shape_error(32), OOM, shape_error(8)])
    assert resp.status_code == 202, resp.text
    body = resp.json()
    assert (body["accepted"], body["duplicates"], body["rejected"]) == (4, 0, 0)
    results = body["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3]
    assert results[0]["issue_id"] == results[1]["issue_id"] == results[3]["issue_id"]
    assert results[2]["issue_id"] != results[0]["issue_id"]
    assert Issue.objects.get(pk=results[0]["issue_id"]).occurrence_count == 3

    # Parsed exactly as a single POST would be, and the first of a new issue says so.
    first = Incident.objects.get(pk=results[0]["incident_id"])
    assert first.shape_diff == [
        {"tensor": None, "op": "matmul", "expected": [None, 512], "actual": [4, 256]}
    ]
    assert [i.opened_issue for i in Incident.objects.order_by("pk")] == ["new", "", "new", ""]

    # A later single POST of the same bug joins the same issue.
    single = requests.post(
        f"{live_server.url}/api/v1/incidents", json=shape_error(64), headers=tenant.auth, timeout=10
    ).json()
    assert single["issue_id"] == results[0]["issue_id"]
    assert Issue.objects.get(pk=single["issue_id"]).occurrence_count == 4


def test_one_bad_item_is_refused_with_its_path_and_the_rest_is_stored(live_server, tenant):
    resp = post_batch(live_server, tenant, [shape_error(4), {"error_type": "E"}, "nonsense", OOM])
    assert resp.status_code == 202, resp.text
    body = resp.json()
    assert (body["accepted"], body["rejected"]) == (2, 2)
    bad = body["results"][1]
    assert bad["status"] == 400
    assert ["body", "batch", "incidents", 1, "service"] in [d["loc"] for d in bad["detail"]]
    assert body["results"][2]["status"] == 400
    assert body["results"][2]["detail"][0]["loc"][:4] == ["body", "batch", "incidents", 2]
    assert Incident.objects.count() == 2


def test_all_items_invalid_is_400_and_stores_nothing(live_server, tenant):
    resp = post_batch(live_server, tenant, [{"service": "s"}, {}])
    assert resp.status_code == 400
    assert resp.json()["rejected"] == 2
    assert ["body", "batch", "incidents", 0] in [d["loc"] for d in resp.json()["detail"]]
    assert Incident.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"incidents": []}, ["body", "batch", "incidents"]),
        ({"incidents": "x"}, ["body", "batch", "incidents"]),
        ({}, ["body", "batch", "incidents"]),
        ([shape_error(4)], ["body", "batch"]),
    ],
)
def test_malformed_batch_is_400_with_path(live_server, tenant, body, loc):
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents/batch", json=body, headers=tenant.auth, timeout=10
    )
    assert resp.status_code == 400, resp.text
    assert loc in [d["loc"] for d in resp.json()["detail"]]


def test_retried_batch_stores_nothing_twice(live_server, tenant):
    with_ids = [{**shape_error(4), "event_id": "evt-1"}, {**OOM, "event_id": "evt-2"}]
    first = post_batch(live_server, tenant, with_ids)
    again = post_batch(live_server, tenant, with_ids)
    assert (first.status_code, again.status_code) == (202, 200)
    assert [r["incident_id"] for r in again.json()["results"]] == [
        r["incident_id"] for r in first.json()["results"]
    ]
    assert again.json()["duplicates"] == 2

    # Without event ids, the Idempotency-Key header covers the items by position.
    plain = [shape_error(8), OOM]
    keyed = post_batch(live_server, tenant, plain, **{"Idempotency-Key": "flush-42"})
    resent = post_batch(live_server, tenant, plain, **{"Idempotency-Key": "flush-42"})
    assert resent.status_code == 200
    assert [r["event_id"] for r in resent.json()["results"]] == ["flush-42:0", "flush-42:1"]
    assert Incident.objects.count() == 4
    assert Issue.objects.get(pk=keyed.json()["results"][0]["issue_id"]).occurrence_count == 2

    # The same event_id twice inside one batch is stored once.
    twice = post_batch(live_server, tenant, [{**OOM, "event_id": "x"}, {**OOM, "event_id": "x"}])
    assert [r["status"] for r in twice.json()["results"]] == [202, 200]
    assert Incident.objects.filter(event_id="x").count() == 1


def test_batch_size_body_size_and_rate_limit_are_enforced(live_server, tenant, settings):
    settings.RCA_MAX_BATCH = 3
    too_many = post_batch(live_server, tenant, [OOM] * 4)
    assert too_many.status_code == 400
    assert "at most 3" in too_many.json()["detail"][0]["msg"]

    settings.RCA_MAX_BATCH_BODY_BYTES = 2000
    big = post_batch(live_server, tenant, [{**OOM, "message": "x" * 3000}])
    assert big.status_code == 413

    settings.RCA_MAX_BATCH_BODY_BYTES = 1024 * 1024
    settings.RCA_RATE_LIMIT_PER_MINUTE = 1
    settings.RCA_RATE_LIMIT_BURST = 5
    assert post_batch(live_server, tenant, [OOM] * 3).status_code == 202
    limited = post_batch(live_server, tenant, [OOM] * 3)  # 2 tokens left, 3 asked
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) >= 1
    assert Incident.objects.count() == 3


def test_batch_needs_a_key(live_server):
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents/batch", json={"incidents": [OOM]}, timeout=10
    )
    assert resp.status_code == 401


@pytest.mark.parametrize(
    "inner",
    [
        b'{"service": "s", "message": "m", "tags": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        b'{"service": "s", "message": "m", "logs": ['
        + b'{"a":' * 3_000
        + b"1"
        + b"}" * 3_000
        + b"]}",
    ],
)
def test_deeply_nested_items_are_refused_not_500(live_server, tenant, inner):
    body = b'{"incidents": [' + inner + b"]}"
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents/batch",
        data=body,
        headers={**tenant.auth, "Content-Type": "application/json"},
        timeout=20,
    )
    assert resp.status_code < 500, resp.text[:300]
    assert resp.json()["detail"]
