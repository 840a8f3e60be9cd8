"""Thousands of generated requests against POST /api/v1/incidents: never a 5xx."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.factories import project_with_key

FIELDS = [
    "service",
    "environment",
    "event_id",
    "occurred_at",
    "error_type",
    "errorType",
    "message",
    "stacktrace",
    "stackTrace",
    "logs",
    "shape_diff",
    "shapeDiff",
    "inference_context",
    "inferenceContext",
    "resource_impact",
    "resourceImpact",
    "tags",
    "fingerprint",
    "model_id",
    "modelId",
    "batch_size",
    "memoryDeltaMB",
    "cpuPeakPercent",
    "expected",
    "actual",
    "frames",
    "filename",
    "lineno",
    "in_app",
    "vars",
    "level",
    "ts",
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(max_size=40)
    | st.sampled_from(["", "Traceback (most recent call last):", "4x256", "a\x00b", "\udc80"])
    | st.sampled_from([float("nan"), float("inf"), float("-inf")])  # json.dumps writes them
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from([*FIELDS, "k\x00"]) | st.text(max_size=8), children, max_size=5
        )
    ),
    max_leaves=20,
)
payloads = st.fixed_dictionaries(
    {},
    optional={name: json_values for name in FIELDS[:18]}
    | {"service": st.text(max_size=30), "message": st.text(max_size=200)},
)
# Always valid at the top, so the generated content reaches parsing, grouping and storage.
accepted_payloads = st.fixed_dictionaries(
    {"service": st.just("fuzz"), "message": st.text(min_size=1, max_size=200)},
    optional={name: json_values for name in FIELDS[:18] if name not in ("service", "message")},
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def auth():
    tenant = project_with_key("fuzz")
    return {"HTTP_AUTHORIZATION": f"Bearer {tenant.key}"}


def _never_5xx(response) -> None:
    assert response.status_code < 500, response.content[:500]
    if response.status_code >= 400:
        body = json.loads(response.content)
        assert body["detail"] and all("loc" in d and d["msg"] for d in body["detail"])


@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=payloads)
def test_generated_incident_payloads_never_cause_5xx(client, auth, payload):
    response = client.post(
        "/api/v1/incidents", data=json.dumps(payload), content_type="application/json", **auth
    )
    _never_5xx(response)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=accepted_payloads)
def test_generated_content_of_valid_incidents_never_causes_5xx(client, auth, payload):
    response = client.post(
        "/api/v1/incidents", data=json.dumps(payload), content_type="application/json", **auth
    )
    _never_5xx(response)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    body=st.binary(max_size=300) | st.text(max_size=300).map(str.encode),
    content_type=st.sampled_from(
        ["application/json", "text/plain", "", "application/x-www-form-urlencoded"]
    ),
)
def test_generated_raw_bodies_never_cause_5xx(client, auth, body, content_type):
    response = client.generic(
        "POST", "/api/v1/incidents", data=body, content_type=content_type, **auth
    )
    _never_5xx(response)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    body=st.fixed_dictionaries({"incidents": st.lists(payloads | json_values, max_size=6)})
    | json_values
)
def test_generated_batches_never_cause_5xx(client, auth, body):
    response = client.post(
        "/api/v1/incidents/batch", data=json.dumps(body), content_type="application/json", **auth
    )
    _never_5xx(response)
    if response.status_code in (200, 202):
        results = json.loads(response.content)["results"]
        assert len(results) == len(body["incidents"])
        for item in results:
            assert item["status"] in (200, 202) or item["detail"][0]["loc"][:3] == [
                "body",
                "batch",
                "incidents",
            ]
