"""Refuse oversized and wrongly typed bodies before anything parses them (413, 415)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from ingest.errors import error_response

JSON_PATHS = ("/api/v1/",)
BATCH_PATH = "/api/v1/incidents/batch"
SENTRY_MARKERS = ("/envelope/", "/store/")
OVER_LIMIT = "rca.body_over_limit"  # set by ingest.request_body on a chunked body cut short


def body_limit(path: str) -> int:
    """The most bytes a request body to ``path`` may have as sent."""
    if path == BATCH_PATH:
        return settings.RCA_MAX_BATCH_BODY_BYTES
    if path.endswith("/envelope/") and not path.startswith(JSON_PATHS):
        return settings.RCA_SENTRY_MAX_ENVELOPE_BYTES
    return settings.RCA_MAX_BODY_BYTES


class IngestLimitsMiddleware:
    """Applies to the ingestion API only; the UI has Django's own limits."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in ("POST", "PUT", "PATCH") and request.path.startswith("/api/"):
            refused = self._check(request)
            if refused is not None:
                return refused
        return self.get_response(request)

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
        is_sentry = any(marker in request.path for marker in SENTRY_MARKERS)
        content_type = (request.content_type or "").lower()
        if (
            request.path.startswith(JSON_PATHS)
            and not is_sentry
            and content_type != "application/json"
        ):
            return error_response(
                415,
                ["header", "Content-Type"],
                f"send JSON with 'Content-Type: application/json' (got {content_type or 'none'!r})",
            )
        return None
