"""The one JSON API, `/api/v1/`: each app's router mounted here, one key authentication.

ingest owns incidents and issues (``ingest/api.py``), rca owns analyses (``rca/api.py``);
webapp is the layer that may know both. Every operation is authenticated with
``ingest.auth.ApiKeyAuth`` and every refusal is an ``ingest.errors.ApiError``; the
documents are served at ``/api/v1/docs`` and ``/api/v1/openapi.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.openapi.schema import OpenAPISchema

from ingest.alertmanager.api import router as alertmanager_router
from ingest.api import router as ingest_router
from ingest.api_parser import JsonBodyParser, refusal_behind
from ingest.auth import ApiKeyAuth, unauthorised
from ingest.errors import detail, error_response
from ingest.otlp.openapi import SCHEMAS as OTLP_SCHEMAS
from ingest.otlp.openapi import otlp_paths
from rca.api import router as analysis_router


class _Api(NinjaAPI):
    """The one API, whose document also shows the OTLP/HTTP endpoints (plain views)."""

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> OpenAPISchema:
        schema = super().get_openapi_schema(*args, **kwargs)
        schema["paths"].update(otlp_paths())
        schema["components"].setdefault("schemas", {}).update(OTLP_SCHEMAS)
        return schema


api = _Api(
    title="Rootcause API",
    version="1",
    urls_namespace="api_v1",
    auth=ApiKeyAuth(),
    docs_url="/docs",
    openapi_url="/openapi.json",
    parser=JsonBodyParser(),
)
api.add_router("/", ingest_router)
api.add_router("/", analysis_router)
api.add_router("/", alertmanager_router)


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> JsonResponse:
    return JsonResponse({"detail": detail(exc.errors)}, status=400)


api.exception_handler(AuthenticationError)(unauthorised)


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> JsonResponse:
    if (refusal := refusal_behind(exc)) is not None:
        return refusal
    return error_response(exc.status_code, [], str(exc))


def path_view(route: str) -> Callable[[HttpRequest], HttpResponse]:
    """ninja's view of `route` (relative to `/api/v1/`), which serves every method of it:
    for a path whose hot method a plain view serves (`ingest.single`), the rest."""
    for pattern in api.urls[0]:
        if str(pattern.pattern) == route and (view := getattr(pattern, "callback", None)):
            return cast(Callable[[HttpRequest], HttpResponse], view)
    raise LookupError(f"no API path {route!r}")
