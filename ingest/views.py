"""The Sentry-compatible endpoints (`/api/<project_id>/envelope/` and `/store/`). Thin."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from ingest.errors import error_response
from ingest.sentry.receive import SentryRefused, receive


def _handle(request: HttpRequest, project_id: int, kind: str) -> JsonResponse:
    try:
        result = receive(project_id, kind, request.body, request.headers, request.GET)
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
    return JsonResponse(
        {
            "id": first,
            "ids": result.event_ids,
            "rejected": result.rejected,
            "dropped": result.dropped,
        }
    )


@csrf_exempt
@require_POST
def envelope(request: HttpRequest, project_id: int) -> JsonResponse:
    return _handle(request, project_id, "envelope")


@csrf_exempt
@require_POST
def store(request: HttpRequest, project_id: int) -> JsonResponse:
    return _handle(request, project_id, "store")
