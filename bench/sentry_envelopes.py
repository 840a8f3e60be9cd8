"""Envelope bodies as the Python Sentry SDK sends them, for benchmarking the envelope path.

Built with the SDK's own `Envelope` class and gzip-compressed as its HTTP transport does
(without brotli installed), so the server decodes, authenticates and maps exactly what a
stock `sentry_sdk.init(dsn=...)` would post. Built before timing: the client's cost of
serialising and compressing is not the server's.
"""

from __future__ import annotations

import gzip
import uuid
from datetime import UTC, datetime
from typing import Any

import sentry_sdk
from sentry_sdk.envelope import Envelope

SDK = {"name": "sentry.python", "version": sentry_sdk.VERSION}


def auth_header(public_key: str) -> str:
    """The `X-Sentry-Auth` header the Python SDK sends with every envelope."""
    return (
        f"Sentry sentry_key={public_key}, sentry_version=7,"
        f" sentry_client=sentry.python/{sentry_sdk.VERSION}"
    )


def event(item: dict[str, Any]) -> dict[str, Any]:
    """A captured exception carrying the same failure as one `/api/v1/incidents` payload."""
    now = datetime.now(UTC).isoformat()
    model_file = item["stacktrace"].split('File "', 1)[1].split('"', 1)[0]
    return {
        "event_id": uuid.uuid4().hex,
        "timestamp": now,
        "platform": "python",
        "level": "error",
        "environment": "prod",
        "release": "ranker@3.1.0",
        "server_name": "gpu-node-7",
        "sdk": SDK,
        "tags": {"service": item["service"]},
        "contexts": {
            "inference": item["inference_context"],
            "runtime": {"name": "CPython", "version": "3.11.9"},
        },
        "breadcrumbs": {
            "values": [
                {
                    "timestamp": now,
                    "type": "log",
                    "category": "app",
                    "level": "error",
                    "message": line,
                }
                for line in item["logs"]
            ]
        },
        "exception": {
            "values": [
                {
                    "type": item["error_type"],
                    "value": item["message"],
                    "mechanism": {"type": "generic", "handled": True},
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": model_file.rsplit("/", 1)[1],
                                "abs_path": model_file,
                                "module": model_file.rsplit("/", 1)[1].removesuffix(".py"),
                                "function": "forward",
                                "lineno": 41,
                                "context_line": "    return self.head(x)",
                                "pre_context": ["    def forward(self, x):"],
                                "post_context": [],
                                "in_app": True,
                                "vars": {"self": "<Ranker>", "x": "tensor(...)"},
                            },
                            {
                                "filename": "torch/nn/modules/linear.py",
                                "abs_path": "/usr/lib/python3.11/site-packages/torch/nn/"
                                "modules/linear.py",
                                "module": "torch.nn.modules.linear",
                                "function": "forward",
                                "lineno": 125,
                                "context_line": "        return F.linear(input, self.weight,"
                                " self.bias)",
                                "in_app": False,
                            },
                        ]
                    },
                }
            ]
        },
    }


def envelope_body(item: dict[str, Any]) -> bytes:
    """One event in one envelope, serialised and gzipped as the SDK's transport does."""
    payload = event(item)
    envelope = Envelope(
        headers={
            "event_id": payload["event_id"],
            "sent_at": payload["timestamp"],
            "sdk": SDK,
        }
    )
    envelope.add_event(payload)
    return gzip.compress(envelope.serialize(), compresslevel=9)
