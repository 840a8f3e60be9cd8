"""The API's edges before and after django-ninja: oversized bodies (413), wrong methods (405).

A body's size is refused here, before anything reads it. Its type is checked by the
API's parser (``ingest/api_parser.py``, 415), which runs only once the method and path
are known to take a body, so a PUT to a read-only path is a 405 whatever it sends.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed

from ingest import metrics
from ingest.errors import error_response
from ingest.inbox import write as inbox_write

JSON_PATHS = ("/api/v1/",)
BATCH_PATH = "/api/v1/incidents/batch"
INGEST_PATHS = ("/api/v1/incidents", BATCH_PATH)
SENTRY_SUFFIXES = ("/envelope/", "/store/")
OTLP_PATHS = ("/otlp/",)
OVER_LIMIT = "rca.body_over_limit"  # set by ingest.request_body on a chunked body cut short


def is_ingest(request: HttpRequest) -> bool:
    """A request that delivers incidents (JSON API or Sentry SDK): its refusals are counted."""
    return request.method == "POST" and (
        request.path in INGEST_PATHS
        or request.path.startswith("/api/")
        and request.path.endswith(SENTRY_SUFFIXES)
    )


def body_limit(path: str) -> int:
    """The most bytes a request body to ``path`` may have as sent."""
    if path == BATCH_PATH:
        return int(settings.RCA_MAX_BATCH_BODY_BYTES)
    if path.startswith(OTLP_PATHS):
        return int(settings.RCA_OTLP_MAX_BYTES)
    if path.endswith("/envelope/") and not path.startswith(JSON_PATHS):
        return int(settings.RCA_SENTRY_MAX_ENVELOPE_BYTES)
    return int(settings.RCA_MAX_BODY_BYTES)


class IngestLimitsMiddleware:
    """Applies to the ingestion API only; the UI has Django's own limits."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_ingest(request):
            return self._respond(request)
        with inbox_write.expecting():  # its process's inbox commit may wait for its rows
            response = self._respond(request)
        if 400 <= response.status_code < 500:
            metrics.count_refusal(response.status_code)
        return response

    def _respond(self, request: HttpRequest) -> HttpResponse:
        if request.method in ("POST", "PUT", "PATCH") and request.path.startswith("/api/"):
            refused = self._check(request)
            if refused is not None:
                return refused
        response = self.get_response(request)
        if isinstance(response, HttpResponseNotAllowed) and request.path.startswith(JSON_PATHS):
            return _method_not_allowed(request, response["Allow"])
        return response

    @staticmethod
    def _check(request: HttpRequest) -> HttpResponse | None:
        limit = body_limit(request.path)
        if request.META.get(OVER_LIMIT):
            return error_response(413, ["body"], f"body is larger than the limit of {limit} bytes")
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return error_response(400, ["header", "Content-Length"], "not a number")
        if length > limit:
            return error_response(
                413, ["body"], f"body is {length} bytes; the limit is {limit} bytes"
            )
        return None


def _method_not_allowed(request: HttpRequest, allow: str) -> HttpResponse:
    """django-ninja's plain-text 405 as the API's JSON error, keeping its `Allow` header."""
    methods = ", ".join(sorted(m.strip() for m in allow.split(",") if m.strip()))
    return error_response(
        405, ["method"], f"{request.method} is not allowed here; use {methods}", Allow=methods
    )
