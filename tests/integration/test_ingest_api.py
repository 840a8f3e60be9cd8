"""The incident API over real HTTP: accepted, grouped, idempotent, scrubbed, and refused clearly."""

from __future__ import annotations

import gzip
import json

import pytest
import requests
from django.db import connection

from ingest.keys import revoke
from ingest.models import ApiKey, Incident, Issue
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def tenant():
    return project_with_key()


def post(live_server, tenant, payload, **headers):
    return requests.post(
        f"{live_server.url}/api/v1/incidents",
        json=payload,
        headers={**tenant.auth, **headers},
        timeout=10,
    )


def post_raw(live_server, tenant, body: str | bytes):
    """A JSON body as written, for what `json=` would refuse or rewrite (NaN, \u0000)."""
    return requests.post(
        f"{live_server.url}/api/v1/incidents",
        data=body.encode() if isinstance(body, str) else body,
        headers={**tenant.auth, "Content-Type": "application/json"},
        timeout=10,
    )


def test_incident_is_accepted_parsed_and_readable(live_server, tenant):
    resp = post(live_server, tenant, shape_error(batch=4))
    assert resp.status_code == 202, resp.text
    body = resp.json()
    assert body["url"].endswith(f"/issues/{body['issue_id']}")

    got = requests.get(
        f"{live_server.url}/api/v1/incidents/{body['incident_id']}", headers=tenant.auth, timeout=5
    ).json()
    frames = got["exceptions"][-1]["frames"]
    assert [f["function"] for f in frames if f["in_app"]] == ["predict", "forward"]
    assert got["shape_diff"] == [
        {"tensor": None, "op": "matmul", "expected": [None, 512], "actual": [4, 256]}
    ]
    assert got["shape_diff_source"] == "extracted"
    assert got["inference_context"]["model_id"] == "ranker-v3"


def test_same_bug_at_other_batch_size_is_one_issue_and_other_error_is_another(live_server, tenant):
    first = post(live_server, tenant, shape_error(batch=4)).json()
    second = post(live_server, tenant, shape_error(batch=32)).json()
    other = post(
        live_server,
        tenant,
        {
            "service": "ranker",
            "error_type": "torch.OutOfMemoryError",
            "message": "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 39.59 GiB total)",
        },
    ).json()
    assert first["issue_id"] == second["issue_id"] != other["issue_id"]
    issue = Issue.objects.get(pk=first["issue_id"])
    assert issue.occurrence_count == 2
    listed = requests.get(f"{live_server.url}/api/v1/issues", headers=tenant.auth, timeout=5)
    assert {i["id"]: i["occurrence_count"] for i in listed.json()["results"]} == {
        first["issue_id"]: 2,
        other["issue_id"]: 1,
    }


def test_retry_with_same_event_id_stores_one_incident(live_server, tenant):
    payload = {**shape_error(batch=4), "event_id": "7f3c2a9e-retry"}
    first = post(live_server, tenant, payload)
    again = post(live_server, tenant, payload)
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["incident_id"] == first.json()["incident_id"]
    assert again.json()["duplicate"] is True
    assert Incident.objects.filter(event_id="7f3c2a9e-retry").count() == 1
    assert Issue.objects.get().occurrence_count == 1


def test_idempotency_key_header_makes_retries_safe(live_server, tenant):
    first = post(live_server, tenant, shape_error(batch=4), **{"Idempotency-Key": "req-1"})
    again = post(live_server, tenant, shape_error(batch=4), **{"Idempotency-Key": "req-1"})
    assert again.json()["incident_id"] == first.json()["incident_id"]
    assert Incident.objects.count() == 1


def test_naive_and_zoned_timestamps_are_stored_in_utc(live_server, tenant):
    naive = post(live_server, tenant, {**shape_error(4), "occurred_at": "2026-11-30T08:15:00"})
    zoned = post(
        live_server, tenant, {**shape_error(5), "occurred_at": "2026-11-30T10:15:00+02:00"}
    )
    assert (naive.status_code, zoned.status_code) == (202, 202), naive.text
    stamps = {i.occurred_at.isoformat() for i in Incident.objects.all()}
    assert stamps == {"2026-11-30T08:15:00+00:00"}


def test_camel_case_aliases_are_accepted(live_server, tenant):
    resp = post(
        live_server,
        tenant,
        {
            "service": "llm",
            "errorType": "ValueError",
            "message": "bad",
            "inferenceContext": {"modelId": "llama-3", "inputHash": "abc", "batchSize": 8},
            "resourceImpact": {"cpuPeakPercent": 97.5, "memoryDeltaMB": 2048},
            "shapeDiff": [
                {"tensor": "x", "op": "matmul", "expected": [None, 512], "actual": [8, 256]}
            ],
        },
    )
    assert resp.status_code == 202, resp.text
    incident = Incident.objects.get()
    assert incident.inference_context["model_id"] == "llama-3"
    assert incident.inference_context["input_hash"] == "abc"
    assert incident.resource_impact == {"cpu_peak_percent": 97.5, "memory_delta_mb": 2048.0}
    assert incident.shape_diff_source == "sent"


def test_secrets_in_message_logs_and_frame_vars_never_reach_the_database(live_server, tenant):
    secret = "sk-proj-Zx81kQ2mV9rT4wLp7Yc3Hn5B"
    resp = post(
        live_server,
        tenant,
        {
            "service": "rag",
            "error_type": "openai.AuthenticationError",
            "message": f"Incorrect API key provided: {secret} (contact ops@example.com)",
            "logs": [
                f"ERROR calling OpenAI with api_key={secret}",
                {"level": "error", "message": f"Authorization: Bearer {secret}"},
            ],
            "stacktrace": [
                {
                    "filename": "/srv/rag/llm.py",
                    "function": "complete",
                    "lineno": 12,
                    "vars": {"api_key": secret, "prompt_len": "412"},
                }
            ],
        },
    )
    assert resp.status_code == 202, resp.text
    with connection.cursor() as cursor:
        cursor.execute("SELECT row_to_json(i)::text FROM ingest_incident i")
        stored = cursor.fetchone()[0]
        cursor.execute("SELECT row_to_json(i)::text FROM ingest_issue i")
        stored += cursor.fetchone()[0]
    assert secret not in stored
    assert "ops@example.com" not in stored
    assert "[redacted:" in stored
    assert "prompt_len" in stored  # the harmless rest survives


@pytest.mark.parametrize(
    ("payload", "loc"),
    [
        ({"error_type": "E"}, ["body", "incident", "service"]),
        ({"service": "s"}, ["body", "incident"]),
        ({"service": "s", "message": "m", "logs": [1]}, ["body", "incident", "logs", 0]),
        (
            {"service": "s", "message": "m", "inference_context": {"batch_size": -1}},
            ["body", "incident", "inference_context", "batch_size"],
        ),
        (
            {"service": "s", "message": "m", "event_id": "has spaces"},
            ["body", "incident", "event_id"],
        ),
        (
            {"service": "s", "message": "m", "shape_diff": [{"expected": "x", "actual": [1]}]},
            ["body", "incident", "shape_diff", 0, "expected"],
        ),
    ],
)
def test_invalid_incident_is_400_with_field_path(live_server, tenant, payload, loc):
    resp = post(live_server, tenant, payload)
    assert resp.status_code == 400, resp.text
    locs = [item["loc"] for item in resp.json()["detail"]]
    assert loc in locs, locs
    assert all(item["msg"] for item in resp.json()["detail"])


def test_malformed_json_is_400(live_server, tenant):
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents",
        data=b'{"service": ',
        headers={**tenant.auth, "Content-Type": "application/json"},
        timeout=5,
    )
    assert resp.status_code == 400
    assert resp.json()["detail"]


def test_missing_unknown_and_revoked_keys_are_401(live_server, tenant):
    url = f"{live_server.url}/api/v1/incidents"
    missing = requests.post(url, json=shape_error(4), timeout=5)
    unknown = requests.post(
        url, json=shape_error(4), timeout=5, headers={"Authorization": "Bearer rc_0000_nope"}
    )
    revoke(ApiKey.objects.get())
    revoked = post(live_server, tenant, shape_error(4))
    for resp in (missing, unknown, revoked):
        assert resp.status_code == 401
        assert resp.json()["detail"][0]["loc"] == ["header", "Authorization"]
    assert Incident.objects.count() == 0


def test_other_projects_objects_are_404(live_server, tenant):
    body = post(live_server, tenant, shape_error(4)).json()
    stranger = project_with_key("other-team")
    for path in (f"incidents/{body['incident_id']}", f"issues/{body['issue_id']}"):
        resp = requests.get(f"{live_server.url}/api/v1/{path}", headers=stranger.auth, timeout=5)
        assert resp.status_code == 404
        assert resp.json()["detail"][0]["msg"]


def test_oversized_body_is_413_and_wrong_content_type_is_415(live_server, tenant, settings):
    big = {"service": "s", "message": "x" * (1024 * 1024 + 10)}
    too_big = post(live_server, tenant, big)
    assert too_big.status_code == 413
    assert too_big.json()["detail"][0]["loc"] == ["body"]
    form = requests.post(
        f"{live_server.url}/api/v1/incidents", data={"service": "s"}, headers=tenant.auth, timeout=5
    )
    assert form.status_code == 415
    assert form.json()["detail"][0]["loc"] == ["header", "Content-Type"]
    compressed = requests.post(
        f"{live_server.url}/api/v1/incidents",
        data=gzip.compress(json.dumps(shape_error(4)).encode()),
        headers={**tenant.auth, "Content-Type": "text/plain"},
        timeout=5,
    )
    assert compressed.status_code == 415


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/api/v1/issues", "GET"),
        ("DELETE", "/api/v1/incidents/1", "GET"),
        ("POST", "/api/v1/analyses/status", "GET"),
        ("GET", "/api/v1/incidents/batch", "POST"),
    ],
)
def test_a_method_the_path_does_not_take_is_a_json_405_naming_the_allowed_ones(
    live_server, tenant, method, path, allow
):
    """Whatever the body's type and whether a key was sent: the method is wrong first."""
    resp = requests.request(
        method, f"{live_server.url}{path}", data="x=1", timeout=5,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )  # fmt: skip
    assert resp.status_code == 405, resp.text
    assert resp.headers["Allow"] == allow
    assert resp.json()["detail"] == [
        {"loc": ["method"], "msg": f"{method} is not allowed here; use {allow}"}
    ]


def test_rate_limit_is_429_with_retry_after(live_server, tenant, settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 6  # one token every 10 s
    settings.RCA_RATE_LIMIT_BURST = 3
    codes = [post(live_server, tenant, shape_error(b)).status_code for b in range(1, 6)]
    assert codes[:3] == [202, 202, 202]
    limited = post(live_server, tenant, shape_error(99))
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["Retry-After"]) <= 10
    assert Incident.objects.count() == 3


def test_every_operation_documents_its_answer_and_its_refusals_with_fields(live_server):
    """`/api/v1/docs` shows fields for each answer, and the one error shape for each refusal."""
    spec = requests.get(f"{live_server.url}/api/v1/openapi.json", timeout=5).json()
    schemas = spec["components"]["schemas"]
    assert set(schemas["ApiError"]["required"]) == {"detail"}
    operations = [op for path, ops in spec["paths"].items() for op in ops.values()
                  if not path.startswith("/otlp/")]  # fmt: skip
    assert len(operations) >= 9
    otlp = [op for path, ops in spec["paths"].items() for op in ops.values()
            if path.startswith("/otlp/")]  # fmt: skip
    for op in otlp:  # OpenTelemetry's exporters read a google.rpc.Status, not our ApiError
        for status, answer in op["responses"].items():
            ref = answer["content"]["application/json"]["schema"]["$ref"]
            assert schemas[ref.rsplit("/", 1)[1]]["properties"], (op["operationId"], status)
            if status.startswith(("4", "5")):
                assert ref == "#/components/schemas/OtlpStatus", (op["operationId"], status)
    for op in operations:
        responses = op["responses"]
        assert "401" in responses, op["operationId"]
        for status, answer in responses.items():
            body = answer["content"]["application/json"]["schema"]
            refs = [body.get("$ref")] if "$ref" in body else [b["$ref"] for b in body["anyOf"]]
            for ref in refs:
                assert schemas[ref.rsplit("/", 1)[1]]["properties"], (op["operationId"], status)
            if status.startswith("4") and status != "400":
                assert refs == ["#/components/schemas/ApiError"], (op["operationId"], status)


def test_openapi_and_docs_are_served(live_server):
    spec = requests.get(f"{live_server.url}/api/v1/openapi.json", timeout=5).json()
    assert "/api/v1/incidents" in spec["paths"]
    docs = requests.get(f"{live_server.url}/api/v1/docs", timeout=5)
    assert docs.status_code == 200


def test_deeply_nested_json_is_400_not_500(live_server, tenant):
    body = b'{"service": "s", "message": "m", "tags": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    resp = post_raw(live_server, tenant, body)
    assert resp.status_code == 400, resp.text[:300]


def test_nul_characters_and_lone_surrogates_are_stored_as_replacement_characters(
    live_server, tenant
):
    """PostgreSQL stores neither; the incident is kept with U+FFFD where they were."""
    body = (
        '{"service": "ranker", "message": "bad\\u0000byte", "tags": {"k\\u0000": "v"},'
        ' "logs": ["x\\u0000y", {"msg": "half \\ud800 pair"}],'
        ' "inference_context": {"model_id": "m", "note": "\\udfff"}}'
    )
    resp = post_raw(live_server, tenant, body)
    assert resp.status_code == 202, resp.text
    incident = Incident.objects.get(pk=resp.json()["incident_id"])
    assert incident.message == "bad\ufffdbyte"
    assert incident.tags == {"k\ufffd": "v"}
    assert "x\ufffdy" in json.dumps(incident.logs, ensure_ascii=False)
    assert "half \ufffd pair" in json.dumps(incident.logs, ensure_ascii=False)
    assert incident.inference_context["note"] == "\ufffd"


def test_nan_and_infinity_are_kept_as_text(live_server, tenant):
    """What `json.dumps` writes for a diverged loss: accepted, and the evidence is kept."""
    body = (
        '{"service": "trainer", "message": "loss is NaN at step 1200",'
        ' "tags": {"loss": NaN, "grad_norm": Infinity},'
        ' "inference_context": {"model_id": "m", "lr_scale": -Infinity},'
        ' "resource_impact": {"memoryDeltaMB": NaN}}'
    )
    resp = post_raw(live_server, tenant, body)
    assert resp.status_code == 202, resp.text
    incident = Incident.objects.get(pk=resp.json()["incident_id"])
    assert incident.tags == {"loss": "NaN", "grad_norm": "Infinity"}
    assert incident.inference_context["lr_scale"] == "-Infinity"
    assert incident.resource_impact == {"memory_delta_mb": "NaN"}


@pytest.mark.parametrize(
    ("params", "count", "shown"),
    [({"offset": 2**63}, 1, 0), ({"offset": 10**20}, 1, 0), ({"limit": 10**30}, 1, 1),
     ({"model_id": "\x00"}, 0, 0), ({"error_type": "Runtime\x00Error"}, 0, 0),
     ({"service": "ranker\x00"}, 0, 0)],
)  # fmt: skip
def test_odd_issue_queries_answer_a_page_not_a_500(live_server, tenant, params, count, shown):
    """As for incidents: an offset past any table is an empty page, a NUL matches as stored."""
    assert post(live_server, tenant, shape_error(4)).status_code == 202
    resp = requests.get(
        f"{live_server.url}/api/v1/issues", params=params, headers=tenant.auth, timeout=10
    )
    assert resp.status_code == 200, resp.text
    assert (resp.json()["count"], len(resp.json()["results"])) == (count, shown)


def test_an_issue_stored_with_a_nul_in_its_service_is_found_by_the_same_name(live_server, tenant):
    resp = post_raw(live_server, tenant, '{"service": "ranker\\u0000eu", "message": "boom"}')
    assert resp.status_code == 202, resp.text
    issues = requests.get(
        f"{live_server.url}/api/v1/issues",
        params={"service": "ranker\x00eu"},
        headers=tenant.auth,
        timeout=10,
    ).json()
    assert [issue["id"] for issue in issues["results"]] == [resp.json()["issue_id"]]
