"""OTLP/HTTP: the real OpenTelemetry SDK's exporters, pointed at the live server."""

from __future__ import annotations

import gzip
import json
import logging

import pytest
import requests
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from ingest.models import Incident
from tests.support.factories import project_with_key
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
RESOURCE = Resource.create(
    {"service.name": "ranker", "deployment.environment.name": "prod", "k8s.pod.name": "r-7"}
)


@pytest.fixture
def tenant():
    return project_with_key("otel-users")


def _incidents(tenant, n=1):
    return wait_for(
        lambda: (rows := list(Incident.objects.filter(project=tenant.project))) and len(rows) >= n
        and rows, 15,
    )  # fmt: skip


def test_sdk_log_exporter_turns_a_logged_exception_into_an_incident(live_server, tenant):
    exporter = OTLPLogExporter(
        endpoint=f"{live_server.url}/otlp/v1/logs",
        headers={"Authorization": f"Bearer {tenant.key}"},
        compression=Compression.Gzip,
    )
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = logging.getLogger("otel-test")
    logger.propagate = False
    logger.addHandler(handler := LoggingHandler(logger_provider=provider))
    try:
        logger.warning("cache warm")  # not an exception: accepted and ignored
        try:
            {}["input_ids"]
        except KeyError:
            logger.exception("tokenizer output lacks input_ids")
        provider.force_flush()
    finally:
        logger.removeHandler(handler)
        provider.shutdown()
    (incident,) = _incidents(tenant)
    assert incident.source == "otlp"
    assert incident.service == "ranker"
    assert incident.environment == "prod"
    assert incident.error_type == "KeyError"
    assert "input_ids" in incident.message
    assert incident.tags["k8s.pod.name"] == "r-7"
    assert any(f["function"] == "test_sdk_log_exporter_turns_a_logged_exception_into_an_incident"
               for f in incident.frames)  # fmt: skip


def test_sdk_span_exporter_turns_a_recorded_exception_into_an_incident(live_server, tenant):
    provider = TracerProvider(resource=RESOURCE)
    exporter = OTLPSpanExporter(
        endpoint=f"{live_server.url}/otlp/v1/traces",
        headers={"Authorization": f"Bearer {tenant.key}"},
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("ranker")
    with tracer.start_as_current_span("healthy"):
        pass
    with pytest.raises(RuntimeError), tracer.start_as_current_span("rank") as span:
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)")
    provider.force_flush()
    provider.shutdown()
    (incident,) = _incidents(tenant)
    assert incident.error_type == "RuntimeError"
    assert incident.tags["span"] == "rank"
    assert incident.tags["trace_id"] == format(span.get_span_context().trace_id, "032x")
    assert incident.tags["span_id"] == format(span.get_span_context().span_id, "016x")
    assert incident.shape_diff  # parsed from the message as for any other incident


def _json_export(message: str, trace_id: str = "5b8efff798038103d269b633813fc60c") -> dict:
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": [
                    {"key": "service.name", "value": {"stringValue": "llm-gateway"}}]},
                "scopeLogs": [{"logRecords": [
                    {"timeUnixNano": "1764800000000000000", "severityText": "ERROR",
                     "traceId": trace_id, "spanId": "eee19b7ec3c1b174",
                     "body": {"stringValue": "request failed"},
                     "attributes": [
                         {"key": "exception.type", "value": {"stringValue": "TimeoutError"}},
                         {"key": "exception.message", "value": {"stringValue": message}},
                         {"key": "retries", "value": {"intValue": "3"}}]},
                    {"body": {"stringValue": "GET /healthz 200"}}]}],
            }
        ]
    }  # fmt: skip


def _post(live_server, tenant, body, content_type="application/json", **headers):
    return requests.post(
        f"{live_server.url}/otlp/v1/logs",
        data=body if isinstance(body, bytes) else json.dumps(body),
        headers={
            "Authorization": f"Bearer {tenant.key}",
            "Content-Type": content_type,
            **headers,
        },
        timeout=10,
    )


def test_json_export_retried_is_stored_once(live_server, tenant):
    body = _json_export("deadline exceeded after 30 s")
    first = _post(live_server, tenant, body)
    again = _post(live_server, tenant, body)  # an exporter's retry after a lost answer
    assert first.status_code == again.status_code == 200
    assert first.headers["Content-Type"] == "application/json"
    assert "partialSuccess" not in first.json()
    (incident,) = _incidents(tenant)
    assert incident.tags["trace_id"] == "5b8efff798038103d269b633813fc60c"
    assert incident.tags["retries"] == 3
    assert incident.occurred_at.year == 2025
    assert Incident.objects.filter(project=tenant.project).count() == 1


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        (b"\xff\x00 not protobuf", "application/x-protobuf", 400),
        (b'{"resourceLogs": [', "application/json", 400),
        (b"[1, 2]", "application/json", 400),
        (b"{}", "text/plain", 415),
    ],
)
def test_malformed_requests_are_refused_with_a_status(live_server, tenant, body, content_type,
                                                      status):  # fmt: skip
    answer = _post(live_server, tenant, body, content_type)
    assert answer.status_code == status
    if content_type == "application/x-protobuf":
        parsed = status_pb2.Status.FromString(answer.content)
        assert parsed.code == 3 and parsed.message
    else:
        assert answer.json()["message"]
    assert not Incident.objects.filter(project=tenant.project).exists()


def test_refusals_a_client_can_act_on(live_server, tenant, settings):
    no_key = requests.post(f"{live_server.url}/otlp/v1/traces", data=b"", timeout=10,
                           headers={"Content-Type": "application/x-protobuf"})  # fmt: skip
    assert no_key.status_code == 401
    settings.RCA_OTLP_MAX_BYTES = 2000
    big = _json_export("x" * 5000)
    assert _post(live_server, tenant, big).status_code == 413
    bomb = gzip.compress(json.dumps(_json_export("y" * 50_000)).encode())
    assert len(bomb) < 2000
    assert _post(live_server, tenant, bomb, **{"Content-Encoding": "gzip"}).status_code == 413
    settings.RCA_OTLP_MAX_BYTES = 16 * 1024 * 1024
    settings.RCA_RATE_LIMIT_PER_MINUTE, settings.RCA_RATE_LIMIT_BURST = 1, 1
    assert _post(live_server, tenant, _json_export("a")).status_code == 200
    limited = _post(live_server, tenant, _json_export("b"))
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) > 0


def test_protobuf_answer_is_an_export_response(live_server, tenant):
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    answer = _post(live_server, tenant, ExportLogsServiceRequest().SerializeToString(),
                   "application/x-protobuf")  # fmt: skip
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "application/x-protobuf"
    ExportLogsServiceResponse.FromString(answer.content)
