"""The Sentry-compatible endpoints (`/api/<project_id>/envelope/` and `/store/`). Thin.

Issue 19: they read the two or three headers they need by name (`RequestHeaders`), and the
query only when no header carried the key, rather than building all of `request.headers`
and `request.GET` on every request; the answer is encoded as `JsonResponse` would encode
it. tests/integration/test_envelope_post.py holds them to the answers of the views that
did (status, body and headers for generated envelopes, malformed ones included).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.http.request import HttpHeaders
from django.utils.datastructures import CaseInsensitiveMapping
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from ingest.errors import error_response
from ingest.sentry.receive import SentryRefused, receive


class RequestHeaders(CaseInsensitiveMapping[str]):
    """`request.headers`, answering a lookup from the one WSGI variable that carries the
    header (`HTTP_X_SENTRY_AUTH` for `X-Sentry-Auth`, as every WSGI server names it); the
    full `HttpHeaders` is built only when that variable is absent (it answers then, so a
    miss is exactly its miss) or when the headers are listed."""

    def __init__(self, meta: Mapping[str, Any]) -> None:  # no super(): nothing built yet
        self._meta = meta

    @cached_property
    def _all(self) -> HttpHeaders:
        return HttpHeaders(self._meta)

    def __getitem__(self, key: str) -> Any:
        variable = key.upper().replace("-", "_")
        if "_" not in key and variable not in HttpHeaders.UNPREFIXED_HEADERS:
            value = self._meta.get(HttpHeaders.HTTP_PREFIX + variable)
            if value is not None:
                return value
        return self._all[key]  # what HttpHeaders answers, a KeyError included

    def __len__(self) -> int:
        return len(self._all)

    def __iter__(self) -> Iterator[str]:
        return iter(self._all)

    def __eq__(self, other: object) -> bool:
        return self._all == other

    def __repr__(self) -> str:
        return repr(self._all)

    def copy(self) -> RequestHeaders:
        return self


class _Query(Mapping[str, str]):
    """`request.GET`, parsed at the first lookup (the key is in a header nearly always)."""

    def __init__(self, request: HttpRequest) -> None:
        self._request = request

    def __getitem__(self, key: str) -> str:
        return self._request.GET[key]

    def __len__(self) -> int:
        return len(self._request.GET)

    def __iter__(self) -> Iterator[str]:
        return iter(self._request.GET)


def _handle(request: HttpRequest, project_id: int, kind: str) -> HttpResponse:
    try:
        result = receive(
            project_id, kind, request.body, RequestHeaders(request.META), _Query(request)
        )
    except SentryRefused as refused:
        extra = {}
        if refused.retry_after:  # X-Sentry-Rate-Limits: <retry_after>:<categories>:<scope>
            # (no categories = all of them) is what current SDKs read to back off.
            extra = {
                "Retry_After": str(refused.retry_after),
                "X_Sentry_Rate_Limits": f"{refused.retry_after}::project",
            }
        return error_response(refused.status, refused.loc, refused.msg, **extra)
    first = result.event_ids[0] if result.event_ids else None
    body: dict[str, Any] = {
        "id": first,
        "ids": result.event_ids,
        "rejected": result.rejected,
        "dropped": result.dropped,
    }
    # JsonResponse's bytes and content type; its DjangoJSONEncoder is for types not here.
    return HttpResponse(json.dumps(body), content_type="application/json")


@csrf_exempt
@require_POST
def envelope(request: HttpRequest, project_id: int) -> HttpResponse:
    return _handle(request, project_id, "envelope")


@csrf_exempt
@require_POST
def store(request: HttpRequest, project_id: int) -> HttpResponse:
    return _handle(request, project_id, "store")
