"""OTLP/HTTP answers, in the encoding of the request, as the specification asks.

Success is 200 with an `Export*ServiceResponse`, whose `partialSuccess` says how many
records were rejected and why (here: exceptions that did not make a valid incident, or
more of them than one request may carry). A refusal carries a `google.rpc.Status`; 429
and 503 carry `Retry-After`, which is what makes OTLP exporters retry (400, 401, 413 and
415 are not retried). An OTLP client reads these bodies, so they follow the OTLP
specification rather than the JSON API's `{"detail": [...]}` shape.
"""

from __future__ import annotations

from django.http import HttpResponse
from google.protobuf.json_format import MessageToJson
from google.protobuf.message import Message
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from ingest.otlp.decode import JSON, PROTOBUF, Signal

_GRPC_CODE = {
    400: code_pb2.INVALID_ARGUMENT,
    401: code_pb2.UNAUTHENTICATED,
    413: code_pb2.RESOURCE_EXHAUSTED,
    415: code_pb2.INVALID_ARGUMENT,
    429: code_pb2.RESOURCE_EXHAUSTED,
    503: code_pb2.UNAVAILABLE,
}


def _encoded(message: Message, media: str | None, status: int) -> HttpResponse:
    if media == PROTOBUF:
        return HttpResponse(message.SerializeToString(), status=status, content_type=PROTOBUF)
    body = MessageToJson(message, indent=None)
    return HttpResponse(body, status=status, content_type=JSON)


def exported(signal: Signal, media: str, rejected: int = 0, why: str = "") -> HttpResponse:
    """200: everything accepted, or all but `rejected` records (partial success)."""
    if signal == "logs":
        answer: Message = ExportLogsServiceResponse()
        if rejected:
            answer.partial_success.rejected_log_records = rejected
    else:
        answer = ExportTraceServiceResponse()
        if rejected:
            answer.partial_success.rejected_spans = rejected
    if rejected or why:
        answer.partial_success.error_message = why[:1000]
    return _encoded(answer, media, 200)


def refused(status: int, message: str, media: str | None, retry_after: int = 0) -> HttpResponse:
    """A refusal as a `google.rpc.Status` (JSON unless the request was protobuf)."""
    answer = status_pb2.Status(code=_GRPC_CODE.get(status, code_pb2.UNKNOWN), message=message)
    response = _encoded(answer, media, status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    if status == 401:
        response["WWW-Authenticate"] = "Bearer"
    return response
