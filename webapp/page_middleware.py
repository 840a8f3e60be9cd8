"""Session, user and messages middleware for the UI only, not the machine endpoints.

Issue 19: on `/api/` and `/otlp/` every request is authenticated by a key in a header
(`ingest.auth`, `ingest.sentry.auth`, `ingest.otlp`), every view is CSRF-exempt, and
nothing reads `request.session`, `request.user` or messages; yet those layers cost
20-60 us of CPU per request in-process (the messages storage alone builds a cookie signer
per request), some 5% of a one-incident POST (bench/request_cpu.py). These subclasses
pass such requests straight through and run Django's own code for everything else, so
the UI, the admin and the checks that look for these middleware (by subclass) are
unchanged. The API's HTML docs page (`/api/v1/docs`) is a page: it keeps the full stack.
CSRF stays Django's own class on every path: `check --deploy` looks for it by name, and its
`process_view` returns at once for the exempt API views. Security headers, host
validation, append-slash and Content-Length (SecurityMiddleware, CommonMiddleware,
XFrameOptionsMiddleware) stay on for every path, as does django-axes (cheap after the
view, and its check wants its name).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.http import HttpRequest

MACHINE_PATHS = ("/api/", "/otlp/")
PAGES_UNDER_API = ("/api/v1/docs",)


def serves_machines(path: str) -> bool:
    """A path whose clients send a key in a header and never a session cookie."""
    return path.startswith(MACHINE_PATHS) and not path.startswith(PAGES_UNDER_API)


class _PagesOnly:
    """Skip this middleware for machine paths; the next one answers (sync or async alike:
    it returns what the rest of the chain returns, a coroutine in async mode)."""

    get_response: Callable[[HttpRequest], Any]

    def __call__(self, request: HttpRequest) -> Any:
        if serves_machines(request.path):
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc]


class SessionMiddleware(_PagesOnly, sessions.SessionMiddleware):
    pass


class AuthenticationMiddleware(_PagesOnly, auth.AuthenticationMiddleware):
    pass


class MessageMiddleware(_PagesOnly, messages.MessageMiddleware):
    pass
