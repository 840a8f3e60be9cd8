"""An OTLP/HTTP request body, protobuf or JSON, as one shape: OTLP's JSON encoding.

OTLP/HTTP sends either binary protobuf (`application/x-protobuf`) or the protobuf JSON
mapping with OTLP's two exceptions (`application/json`): trace and span ids are hex, not
base64, and enum values are integers. A protobuf body is parsed with the message classes
of `opentelemetry-proto` and turned into that JSON form as far as the mapping reads it
(`ingest/otlp/protobuf.py`: bounded by the records the mapping looks at, not by the body's
size), so the mapping to incidents is written once. Parsing is bounded: the body was
size-checked and decompressed within a budget by the view, protobuf's own recursion limit
holds for binary bodies, and JSON is depth-checked before it is parsed.
"""

from __future__ import annotations

import binascii
from typing import Any, Literal

from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ingest.json_depth import TooDeep, check_depth
from ingest.storable import json_loads

Signal = Literal["logs", "traces"]
PROTOBUF = "application/x-protobuf"
JSON = "application/json"
REQUESTS: dict[str, type[Message]] = {
    "logs": ExportLogsServiceRequest,
    "traces": ExportTraceServiceRequest,
}


class Trimmed(dict[str, Any]):
    """A protobuf request converted in part; `cut` when the walk's budget stopped it early
    (the mapping then reports the request as truncated)."""

    cut: bool = False


class OtlpError(ValueError):
    """A body that is not a valid export request: 400, with the reason."""


def encoding(content_type: str | None) -> str | None:
    """`PROTOBUF`, `JSON`, or None for a type OTLP/HTTP does not send (415)."""
    media = (content_type or "").split(";")[0].strip().lower()
    return media if media in (PROTOBUF, JSON) else None


def parse_protobuf(signal: Signal, body: bytes) -> Message:
    """The parsed export request (`ingest.otlp.protobuf.decode` turns it into JSON form)."""
    message = REQUESTS[signal]()
    try:
        message.ParseFromString(body)
    except (DecodeError, RecursionError) as exc:
        raise OtlpError(f"not a protobuf {type(message).__name__}: {exc}") from None
    return message


def from_json(signal: Signal, body: bytes) -> dict[str, Any]:
    """The export request of a JSON body; OtlpError when it is not one."""
    try:
        check_depth(body, ["body"])
        data = json_loads(body)
    except TooDeep as exc:
        raise OtlpError(str(exc)) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise OtlpError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise OtlpError(f"the body must be a JSON object (an OTLP {signal} export request)")
    return data


def hex_id(value: Any, size: int) -> str:
    """A trace (16 bytes) or span (8 bytes) id as lowercase hex, or "" when it is not one."""
    if not isinstance(value, str) or len(value) != size * 2:
        return ""
    try:
        return bytes.fromhex(value).hex()
    except (ValueError, binascii.Error):
        return ""
