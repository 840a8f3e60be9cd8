"""The URL map with the Sentry endpoints' views as they were before issue 19's leaner
reading of headers and query (`request.headers`, `request.GET`, `JsonResponse`):
tests/integration/test_envelope_post.py holds the served views to their answers."""

from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from ingest.errors import error_response
from ingest.sentry.receive import SentryRefused, receive
from webapp.urls import urlpatterns as _served


def _handle(request: HttpRequest, project_id: int, kind: str) -> JsonResponse:
    try:
        result = receive(project_id, kind, request.body, request.headers, request.GET)
    except SentryRefused as refused:
        extra = {}
        if refused.retry_after:
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


_SENTRY = ("api/<int:project_id>/envelope/", "api/<int:project_id>/store/")
urlpatterns = [
    path("api/<int:project_id>/envelope/", envelope),
    path("api/<int:project_id>/store/", store),
    *[p for p in _served if str(p.pattern) not in _SENTRY],
]
