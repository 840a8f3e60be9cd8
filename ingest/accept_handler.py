"""The accept POSTs through Django's own handler, with only the middleware they use.

Issue 19: the single and envelope paths are measured against `GET /healthz` on the same
server, and every request paid the whole middleware stack, thirteen layers deep with
Django's exception wrapper around each. Seven of them do nothing for a keyed POST to
`/api/v1/incidents` or `/api/<project>/envelope/` (`/store/`): WhiteNoise serves only
static files; the session, user and messages layers pass `/api/` through
(`webapp/page_middleware.py`); these views are CSRF-exempt and never ask for a token;
htmx details are read by pages only; django-axes acts on a locked-out login only.

`AcceptHandler` is Django's `WSGIHandler` (request_started/finished and their
connection housekeeping, URL resolution, exception-to-response, the 500 log) whose
middleware chain is `KEPT`, in settings' order: security headers and SSL redirect,
database-down JSON answers, the ingest body limit and refusal counts, host validation,
X-Frame-Options. `accept_dispatch` sends those POSTs to it and everything else, other
methods of the same paths included, to the full stack. The answers are the full stack's,
headers included (tests/integration/test_accept_handler.py compares them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

#: The middleware an accept POST goes through (by name, as in settings.MIDDLEWARE).
KEPT = (
    "django.middleware.security.SecurityMiddleware",
    "webapp.database_down.DatabaseDownMiddleware",
    "ingest.limits.IngestLimitsMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
)
#: The POST paths served by `AcceptHandler` (as `webapp/urls.py` routes them).
ACCEPT_PATH = re.compile(r"/api/(?:v1/incidents|[0-9]+/(?:envelope|store)/)")


class AcceptHandler(WSGIHandler):
    """Django's WSGI handler with `KEPT` (those of settings.MIDDLEWARE named there)."""

    def load_middleware(self, is_async: bool = False) -> None:
        full = settings.MIDDLEWARE
        # BaseHandler reads settings.MIDDLEWARE; this runs once, at import, before serving.
        settings.MIDDLEWARE = [name for name in full if name in KEPT]
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = full


def is_accept(environ: dict[str, Any]) -> bool:
    """A POST to one of the accept paths."""
    return environ.get("REQUEST_METHOD") == "POST" and bool(
        ACCEPT_PATH.fullmatch(environ.get("PATH_INFO", ""))
    )


def accept_dispatch(full: WSGIApp) -> WSGIApp:
    """`full` for every request but the accept POSTs, which `AcceptHandler` serves."""
    lean = AcceptHandler()

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if is_accept(environ):
            return lean(environ, start_response)
        return full(environ, start_response)

    return application
