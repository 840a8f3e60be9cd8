"""`/metrics`: Prometheus exposition of every process's counts (see ingest/metrics.py).

Who may read it: with `RCA_METRICS_TOKEN` set, any client sending `Authorization: Bearer
<token>` (compared in constant time), nobody else (401). Unset, only clients on loopback,
judged by the socket peer (`REMOTE_ADDR`), never by X-Forwarded-For, which the client
writes (403 for everyone else). Counts are not secrets, but project slugs and volumes
are nobody's business outside.
"""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ingest.metrics import render


def _on_loopback(request: HttpRequest) -> bool:
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


def _refusal(request: HttpRequest) -> HttpResponse | None:
    token: str = settings.RCA_METRICS_TOKEN
    if not token:
        if _on_loopback(request):
            return None
        return HttpResponse(
            "/metrics is open on loopback only; set RCA_METRICS_TOKEN to scrape it from "
            "elsewhere with Authorization: Bearer <token>.\n",
            status=403,
            content_type="text/plain",
        )
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
        return None
    response = HttpResponse(
        "Send Authorization: Bearer <RCA_METRICS_TOKEN>.\n", status=401, content_type="text/plain"
    )
    response["WWW-Authenticate"] = 'Bearer realm="metrics"'
    return response


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    refused = _refusal(request)
    if refused is not None:
        return refused
    body, content_type = render()
    return HttpResponse(body, content_type=content_type)
