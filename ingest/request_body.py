"""Chunked request bodies reach Django whole, read no further than the body limit allows.

A WSGI request sent with ``Transfer-Encoding: chunked`` has no ``Content-Length``, so
Django reads it as empty (``request.body == b""``): every event a chunked client sends
(``@sentry/node``'s transport, ``curl -T -``) would be lost. gunicorn decodes the
chunks for us (``wsgi.input_terminated``); this wrapper reads them up to the path's limit
plus one byte, hands Django the bytes with their length, and marks a body that went past
the limit so ``IngestLimitsMiddleware`` answers 413 without anything holding the rest.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

from ingest.limits import OTLP_PATHS, OVER_LIMIT, body_limit

_READ = 64 * 1024

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def is_chunked(environ: dict[str, Any]) -> bool:
    """A body framed by chunks (or by the end of the stream) rather than a length."""
    if environ.get("CONTENT_LENGTH"):
        return False
    coding = environ.get("HTTP_TRANSFER_ENCODING", "").lower()
    return "chunked" in coding or bool(environ.get("wsgi.input_terminated") and coding)


def read_at_most(stream: Any, most: int) -> bytes:
    """Read until the stream ends or ``most`` bytes are in hand, in bounded steps."""
    parts: list[bytes] = []
    have = 0
    while have < most:
        part = stream.read(min(_READ, most - have))
        if not part:
            break
        parts.append(part)
        have += len(part)
    return b"".join(parts)


class ChunkedBodyMiddleware:
    """Wraps the WSGI application (``webapp/wsgi.py``); touches only ``/api/`` and ``/otlp/``."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        if path.startswith(("/api/", *OTLP_PATHS)) and is_chunked(environ):
            limit = body_limit(path)
            body = read_at_most(environ["wsgi.input"], limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
            if len(body) > limit:
                environ[OVER_LIMIT] = True
        return self.app(environ, start_response)
