"""While the database is away, ingest goes on for keys it knows and says 503 for the others.

The database is made unreachable for the request the way an outage does it: the default
connection points at a port nothing listens on (the test cluster keeps running, and is
used again to look at what happened). Requests go through the whole middleware stack.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from ingest import keys, ratelimit
from ingest.models import ApiKey
from ingest.spool.directory import Spool
from tests.integration.test_metrics import parse, value
from tests.integration.test_sentry_corpus import envelope_bytes
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client() -> Client:
    """Answers as a server gives them: an exception becomes its response, never raised here."""
    return Client(raise_request_exception=False)


@pytest.fixture(autouse=True)
def fresh_state(settings, tmp_path) -> Iterator[None]:
    """A spool of the test's own, and no key or bucket remembered from another test."""
    settings.RCA_SPOOL_DIR = str(tmp_path / "spool")
    for cache in (keys.API_KEYS, keys.SENTRY_KEYS):
        cache.clear()
    ratelimit.LOCAL.clear()
    yield
    for cache in (keys.API_KEYS, keys.SENTRY_KEYS):
        cache.clear()


class Outage:
    """Switch the database away and back within one test."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.closed_port = s.getsockname()[1]
        self.saved = dict(connection.settings_dict)

    def begin(self) -> None:
        connection.close()
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(self.closed_port))

    def end(self) -> None:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(self.saved)


@pytest.fixture
def outage() -> Iterator[Outage]:
    away = Outage()
    try:
        yield away
    finally:
        away.end()


def post(client: Client, path: str, body: object, **headers: str):
    return client.post(path, json.dumps(body), content_type="application/json", headers=headers)


def spooled(settings) -> list[dict]:
    records: list[dict] = []
    Spool(settings.RCA_SPOOL_DIR, 10**9).replay(records.extend)
    return records


def assert_503_json(response) -> None:
    assert response.status_code == 503, response.content
    assert response["Content-Type"].startswith("application/json")
    assert int(response["Retry-After"]) > 0
    assert response.json()["detail"][0]["msg"]


def test_a_key_used_before_the_outage_is_accepted_into_the_spool(client, outage, settings):
    tenant = project_with_key("ml-platform")
    auth = {"Authorization": f"Bearer {tenant.key}"}
    assert post(client, "/api/v1/incidents", shape_error(8), **auth).status_code in (200, 202)

    outage.begin()
    single = post(client, "/api/v1/incidents", {**shape_error(16), "event_id": "out-1"}, **auth)
    assert single.status_code == 202, single.content
    batch = post(
        client,
        "/api/v1/incidents/batch",
        {"incidents": [{**shape_error(32), "event_id": f"out-b{i}"} for i in range(3)]},
        **auth,
    )
    assert batch.status_code == 202, batch.content
    outage.end()

    records = spooled(settings)
    assert [r["event_id"] for r in records] == ["out-1", "out-b0", "out-b1", "out-b2"]
    assert {r["project_id"] for r in records} == {tenant.project.pk}


def test_a_key_not_seen_recently_gets_503_json_never_202_nor_401(client, outage, settings):
    seen, unseen = project_with_key("seen"), project_with_key("unseen")
    post(client, "/api/v1/incidents", shape_error(8), Authorization=f"Bearer {seen.key}")

    outage.begin()
    refused = post(
        client, "/api/v1/incidents", shape_error(8), Authorization=f"Bearer {unseen.key}"
    )
    assert_503_json(refused)
    assert "has not been used recently" in refused.json()["detail"][0]["msg"]
    # A wrong secret behind a prefix it knows is certainly not that key: 401.
    prefix = seen.key.rsplit("_", 1)[0]
    forged = post(client, "/api/v1/incidents", shape_error(8), Authorization=f"Bearer {prefix}_x")
    assert forged.status_code == 401
    outage.end()
    assert spooled(settings) == []


def test_a_key_seen_longer_ago_than_the_window_gets_503(client, outage, settings):
    tenant = project_with_key("ml-platform")
    post(client, "/api/v1/incidents", shape_error(8), **tenant.auth)
    settings.RCA_KEY_CACHE_SECONDS = 0
    outage.begin()
    assert_503_json(post(client, "/api/v1/incidents", shape_error(8), **tenant.auth))


def test_a_key_another_process_used_is_known_after_the_reload(client, outage, settings):
    """Each gunicorn worker reloads every recently used key: which one answers must not matter."""
    used_elsewhere, idle = project_with_key("elsewhere"), project_with_key("idle")
    ApiKey.objects.filter(project=used_elsewhere.project).update(last_used_at=timezone.now())
    ApiKey.objects.filter(project=idle.project).update(
        last_used_at=timezone.now() - timedelta(seconds=settings.RCA_KEY_CACHE_SECONDS + 60)
    )
    other = project_with_key("other")
    post(client, "/api/v1/incidents", shape_error(8), **other.auth)  # the reload runs here

    outage.begin()
    assert (
        post(client, "/api/v1/incidents", shape_error(8), **used_elsewhere.auth).status_code == 202
    )
    assert_503_json(post(client, "/api/v1/incidents", shape_error(8), **idle.auth))


def test_revocation_by_another_process_holds_within_the_trust_window(client, outage, settings):
    settings.RCA_KEY_TRUST_SECONDS = 0.3  # 2 s by default: checked without a query that long
    tenant = project_with_key("ml-platform")
    assert post(client, "/api/v1/incidents", shape_error(8), **tenant.auth).status_code in (
        200,
        202,
    )
    # Revoked by another process (the settings page of another web worker): not this one's cache.
    ApiKey.objects.filter(project=tenant.project).update(revoked_at=timezone.now())
    time.sleep(0.4)
    assert post(client, "/api/v1/incidents", shape_error(8), **tenant.auth).status_code == 401
    outage.begin()  # and the refusal forgot it: during an outage it is not taken either
    assert_503_json(post(client, "/api/v1/incidents", shape_error(8), **tenant.auth))


def test_revocation_by_this_process_holds_at_once(client, settings):
    settings.RCA_KEY_TRUST_SECONDS = 60
    tenant = project_with_key("ml-platform")
    assert post(client, "/api/v1/incidents", shape_error(8), **tenant.auth).status_code == 202
    keys.revoke(ApiKey.objects.get(project=tenant.project))
    assert post(client, "/api/v1/incidents", shape_error(8), **tenant.auth).status_code == 401


def test_the_rate_limit_holds_during_the_outage(client, outage, settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 6
    settings.RCA_RATE_LIMIT_BURST = 2
    tenant = project_with_key("ml-platform")
    post(client, "/api/v1/incidents", shape_error(8), **tenant.auth)  # spends 1 of 2
    outage.begin()
    answers = [
        post(client, "/api/v1/incidents", {**shape_error(8), "event_id": f"r{i}"}, **tenant.auth)
        for i in range(4)
    ]
    # This process's bucket starts at the burst and refills at 6 a minute.
    assert [a.status_code for a in answers] == [202, 202, 429, 429]
    assert answers[2]["Content-Type"].startswith("application/json")
    assert int(answers[2]["Retry-After"]) >= 1
    outage.end()
    assert [r["event_id"] for r in spooled(settings)] == ["r0", "r1"]


def test_a_full_spool_is_503_json_with_retry_after(client, outage, settings):
    settings.RCA_SPOOL_MAX_BYTES = 100
    tenant = project_with_key("ml-platform")
    post(client, "/api/v1/incidents", shape_error(8), **tenant.auth)
    outage.begin()
    refused = post(client, "/api/v1/incidents", shape_error(8), **tenant.auth)
    assert_503_json(refused)
    outage.end()
    assert spooled(settings) == []


def sentry_post(client: Client, project, body: bytes, key: str):
    return client.post(
        f"/api/{project.pk}/envelope/",
        body,
        content_type="application/x-sentry-envelope",
        headers={"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={key}"},
    )


def test_the_sentry_dsn_key_is_checked_from_the_cache_during_the_outage(client, outage, settings):
    tenant, later = project_with_key("sdk-users"), project_with_key("later")
    event = {"exception": {"values": [{"type": "ValueError", "value": "bad batch"}]}}
    body = envelope_bytes({"event_id": "a" * 32}, [({"type": "event"}, event)])
    key = tenant.project.sentry_key
    assert sentry_post(client, tenant.project, body, key).status_code == 200

    outage.begin()
    body2 = envelope_bytes({"event_id": "b" * 32}, [({"type": "event"}, event)])
    answer = sentry_post(client, tenant.project, body2, key)
    assert answer.status_code == 200, answer.content
    assert answer.json()["id"] == "b" * 32
    assert sentry_post(client, tenant.project, body2, "0" * 32).status_code == 401  # old DSN
    outage.end()
    assert [r["event_id"] for r in spooled(settings)] == ["b" * 32]

    keys.SENTRY_KEYS.clear()  # a process that has not reloaded since `later` was created
    outage.begin()
    assert_503_json(sentry_post(client, later.project, body2, later.project.sentry_key))


def test_no_api_path_answers_html(client, outage):
    tenant = project_with_key("ml-platform")
    missing = client.get("/api/v1/no-such-thing", headers=tenant.auth)
    assert missing.status_code == 404
    assert missing["Content-Type"].startswith("application/json")
    assert missing.json()["detail"][0]["msg"]
    wrong_method = client.get(f"/api/{tenant.project.pk}/envelope/")
    assert wrong_method.status_code == 405
    assert wrong_method.json()["detail"][0]["msg"]
    assert "POST" in wrong_method["Allow"]

    post(client, "/api/v1/incidents", shape_error(8), **tenant.auth)
    outage.begin()
    read = Client(raise_request_exception=False).get("/api/v1/incidents", headers=tenant.auth)
    assert_503_json(read)  # a known key, then a query that cannot run


def test_metrics_still_show_the_spool_while_the_database_is_away(client, outage, settings):
    tenant = project_with_key("ml-platform")
    post(client, "/api/v1/incidents", shape_error(8), **tenant.auth)
    outage.begin()
    for i in range(3):
        post(client, "/api/v1/incidents", {**shape_error(8), "event_id": f"m{i}"}, **tenant.auth)
    scraped = client.get("/metrics")
    assert scraped.status_code == 200, scraped.content[:500]
    samples = parse(scraped.content.decode())
    assert value(samples, "rootcause_spool_records") == 3
    assert value(samples, "rootcause_spool_bytes") > 0
    # The gauges read from the database are absent, not a 500 for the whole scrape.
    assert not [name for name, _ in samples if name == "rootcause_analysis_queue_depth"]


def test_a_server_error_under_api_is_json_500_while_the_database_answers(rf):
    """Django's own 500 page (a bug in a view or a middleware) never reaches an API client."""
    from django.http import HttpResponseServerError

    from webapp.database_down import DatabaseDownMiddleware

    page = HttpResponseServerError("<h1>Server Error (500)</h1>")
    answer = DatabaseDownMiddleware(lambda request: page)(rf.post("/api/v1/incidents"))
    assert answer.status_code == 500
    assert answer["Content-Type"].startswith("application/json")
    assert "server's log" in json.loads(answer.content)["detail"][0]["msg"]
    ui = DatabaseDownMiddleware(lambda request: page)(rf.get("/"))
    assert ui is page  # pages keep Django's answer while the database answers
