"""The OTLP/HTTP endpoints in the API's OpenAPI document (they are plain Django views).

The bodies are OpenTelemetry's, not ours, so the document names the protobuf messages and
gives the JSON encoding's outline; the OTLP specification is the reference for the rest.
"""

from __future__ import annotations

from typing import Any

SPEC = "https://opentelemetry.io/docs/specs/otlp/#otlphttp"
_STATUS = {"$ref": "#/components/schemas/OtlpStatus"}
#: Schemas the operations refer to, added to the document's components.
SCHEMAS: dict[str, Any] = {
    "OtlpStatus": {
        "type": "object",
        "title": "OtlpStatus",
        "description": "A google.rpc.Status (protobuf when the request was protobuf).",
        "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
    },
    "OtlpExportResponse": {
        "type": "object",
        "title": "OtlpExportResponse",
        "description": "An Export*ServiceResponse; `partialSuccess` only when some were "
        "rejected (rejectedLogRecords or rejectedSpans, an int64 written as a string).",
        "properties": {
            "partialSuccess": {
                "type": "object",
                "properties": {
                    "rejectedLogRecords": {"type": ["string", "integer"]},
                    "rejectedSpans": {"type": ["string", "integer"]},
                    "errorMessage": {"type": "string"},
                },
            }
        },
    },
}
_RETRY = {"Retry-After": {"schema": {"type": "string"}, "required": True}}


def _refusal(why: str, retry: bool = False) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "description": why,
        "content": {
            "application/json": {"schema": _STATUS},
            "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
        },
    }
    if retry:
        answer["headers"] = _RETRY
    return answer


def _operation(signal: str, container: str, record: str, rejected: str) -> dict[str, Any]:
    return {
        "post": {
            "tags": ["opentelemetry"],
            "operationId": f"otlp_export_{signal}",
            "summary": f"OTLP/HTTP {signal} export: {record} with exceptions become incidents",
            "description": (
                f"An `Export{signal.title()}ServiceRequest`, protobuf or JSON ({SPEC}). "
                f"Each {record} carrying `exception.type`, `exception.message` or "
                "`exception.stacktrace` becomes an incident (service from `service.name`, "
                "trace and span ids, resource attributes as tags); everything else is "
                "accepted and ignored. `Content-Encoding: gzip` is accepted."
            ),
            "security": [{"ApiKeyAuth": []}],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                container: {"type": "array", "items": {"type": "object"}}
                            },
                        }
                    },
                    "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
                },
            },
            "responses": {
                "200": {
                    "description": f"Accepted; `partialSuccess.{rejected}` counts exceptions "
                    "that could not become incidents, with the reason.",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/OtlpExportResponse"}
                        },
                        "application/x-protobuf": {
                            "schema": {"type": "string", "format": "binary"}
                        },
                    },
                },
                "400": _refusal("Not an export request (malformed protobuf or JSON)."),
                "401": _refusal("No key, or an unknown or revoked one."),
                "413": _refusal("Larger than RCA_OTLP_MAX_BYTES, as sent or decompressed."),
                "415": _refusal("Neither application/x-protobuf nor application/json."),
                "429": _refusal("Over the key's rate limit; retry after.", retry=True),
                "503": _refusal("Cannot accept now (database and spool); retry after.", True),
            },
        }
    }


def otlp_paths() -> dict[str, Any]:
    """The OpenAPI `paths` entries of `/otlp/v1/logs` and `/otlp/v1/traces`."""
    return {
        "/otlp/v1/logs": _operation("logs", "resourceLogs", "log record", "rejectedLogRecords"),
        "/otlp/v1/traces": _operation("traces", "resourceSpans", "span event", "rejectedSpans"),
    }
