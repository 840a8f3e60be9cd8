"""Every `/api/v1` operation, fuzzed from its own OpenAPI document: never a 5xx, and every
answer is one the document declares (status code, content type, headers, body schema).

schemathesis reads the schema the app serves at `/api/v1/openapi.json`, generates valid
and invalid requests for each operation (bodies, path and query parameters, headers) and
sends them over real HTTP to the live server, authenticated with a key made the way users
make one.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from ingest.models import Incident
from tests.support.factories import project_with_key, shape_error
from webapp.wsgi import application

# Small ids (the fuzzer tries 0, 1, 2... first) find the rows the tenant fixture stores.
pytestmark = pytest.mark.django_db(transaction=True, reset_sequences=True)

#: Examples per operation: ~20 s for all of them on 2 cores. A deeper hunt:
#: RCA_FUZZ_EXAMPLES=300 pytest tests/integration/test_api_schemathesis.py
EXAMPLES = int(os.environ.get("RCA_FUZZ_EXAMPLES", "30"))

# Loaded through the app's own URL map at collection time (the operations become test
# items); the requests themselves go to the live server below. (schemathesis'
# `from_fixture` would load it from the live server, but does not run on pytest 9.2.)
schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application)


@pytest.fixture
def tenant(live_server):
    """A project with a key and one stored incident, so lookups can also find something."""
    tenant = project_with_key("fuzz")
    resp = call(live_server, tenant, "POST", "/api/v1/incidents", json=shape_error(batch=3))
    assert resp.status_code == 202, resp.text
    return tenant


def call(live_server, tenant, method: str, path: str, **kwargs) -> requests.Response:
    return requests.request(
        method, f"{live_server.url}{path}", headers=tenant.auth, timeout=10, **kwargs
    )


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_api_operation_answers_with_a_server_error(case, live_server, tenant):
    case.call_and_validate(
        base_url=live_server.url,
        headers=tenant.auth,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_headers_conformance,
            response_schema_conformance,
        ],
        timeout=30,
    )


# Regressions the fuzzer found. Python accepts UTC offsets up to ±23:59, PostgreSQL only
# up to ±15:59: such a time reached the database as written and came back as a 500.


def test_a_far_utc_offset_in_occurred_at_is_stored_as_the_same_instant(live_server, tenant):
    incident = {**shape_error(batch=5), "occurred_at": "2026-03-01T12:00:00-22:03"}
    single = call(live_server, tenant, "POST", "/api/v1/incidents", json=incident)
    assert single.status_code == 202, single.text
    other_side = {**incident, "occurred_at": "2026-03-01T12:00:00+19:01"}
    batch = call(
        live_server, tenant, "POST", "/api/v1/incidents/batch", json={"incidents": [other_side]}
    )
    assert batch.status_code == 202, batch.text

    stored = Incident.objects.get(pk=single.json()["incident_id"]).occurred_at
    assert stored == datetime(2026, 3, 2, 10, 3, tzinfo=UTC)
    stored = Incident.objects.get(pk=batch.json()["results"][0]["incident_id"]).occurred_at
    assert stored == datetime(2026, 2, 28, 16, 59, tzinfo=UTC)


def test_a_time_with_no_utc_equivalent_is_a_400_naming_the_field(live_server, tenant):
    incident = {**shape_error(batch=5), "occurred_at": "0001-01-01T00:00:00+01:00"}
    resp = call(live_server, tenant, "POST", "/api/v1/incidents", json=incident)
    assert resp.status_code == 400, resp.text
    assert resp.json()["detail"][0]["loc"][-1] == "occurred_at"


@pytest.mark.parametrize("path", ["/api/v1/issues", "/api/v1/incidents"])
def test_a_far_utc_offset_in_since_filters_by_the_same_instant(live_server, tenant, path):
    def count(since: str) -> int:
        resp = call(live_server, tenant, "GET", path, params={"since": since})
        assert resp.status_code == 200, resp.text
        return resp.json()["count"]

    assert count("2000-01-01T00:00:00+19:01") == 1
    assert count("9999-12-30T00:00:00-22:00") == 0
