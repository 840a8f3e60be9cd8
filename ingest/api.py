"""The JSON API (django-ninja): POST incidents, read incidents and issues. Thin handlers."""

from __future__ import annotations

import re
from typing import Any

from django.http import HttpRequest, JsonResponse
from ninja import Field, NinjaAPI, Query, Schema, Status
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer

from ingest import keys, ratelimit
from ingest.api_parser import DepthLimitedParser, too_deep_cause
from ingest.batch import ITEMS_LOC, accept_batch, max_items
from ingest.errors import detail, error_response
from ingest.incident_list import IncidentFilters, find_incidents
from ingest.models import ApiKey, Incident, Issue
from ingest.responses import IncidentPage
from ingest.schema import EVENT_ID, BatchIn, IncidentIn, Timestamp
from ingest.serializers import incident_dict, issue_dict, issue_url
from ingest.store import store_incident


def key_of(request: HttpRequest) -> ApiKey:
    """The authenticated key (django-ninja sets `request.auth` after BearerKey succeeds)."""
    return request.auth  # type: ignore[attr-defined]


class BearerKey(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        return keys.authenticate(token)


api = NinjaAPI(
    title="Rootcause API",
    version="1",
    urls_namespace="api_v1",
    auth=BearerKey(),
    docs_url="/docs",
    openapi_url="/openapi.json",
    parser=DepthLimitedParser(),
)


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> JsonResponse:
    return JsonResponse({"detail": detail(exc.errors)}, status=400)


@api.exception_handler(AuthenticationError)
def _unauthorised(request: HttpRequest, exc: AuthenticationError) -> JsonResponse:
    sent = "Authorization" in request.headers
    msg = (
        "unknown or revoked API key"
        if sent
        else "send 'Authorization: Bearer <api key>' (create keys in the project settings)"
    )
    response = error_response(401, ["header", "Authorization"], msg)
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> JsonResponse:
    if (deep := too_deep_cause(exc)) is not None:
        return error_response(400, deep.loc, str(deep))
    return error_response(exc.status_code, [], str(exc))


def _not_found(what: str, ident: int) -> JsonResponse:
    return error_response(404, ["path", "id"], f"no {what} {ident} in this project")


def _rate_limited(key: ApiKey, cost: int = 1) -> JsonResponse | None:
    limit = ratelimit.take(f"key:{key.pk}", cost)
    if limit.allowed:
        return None
    return error_response(
        429,
        ["header", "Authorization"],
        f"rate limit for this key exceeded; retry in {limit.retry_after} s",
        Retry_After=str(limit.retry_after),
    )


def _idempotency_key(request: HttpRequest, max_length: int) -> str | None:
    """The header's value; ValueError when it could not serve as an event id."""
    idem = request.headers.get("Idempotency-Key")
    if idem is not None and (len(idem) > max_length or not re.fullmatch(EVENT_ID, idem)):
        raise ValueError(f"use 1-{max_length} of [A-Za-z0-9._:-]")
    return idem


@api.post("/incidents", response={200: dict, 202: dict}, summary="Report an incident")
def post_incident(request: HttpRequest, incident: IncidentIn) -> Any:
    key = key_of(request)
    if (refused := _rate_limited(key)) is not None:
        return refused
    try:
        idem = _idempotency_key(request, 64)
    except ValueError as exc:
        return error_response(400, ["header", "Idempotency-Key"], str(exc))
    stored = store_incident(key.project, incident.payload(), idempotency_key=idem)
    body = {
        "incident_id": stored.incident.pk,
        "issue_id": stored.incident.issue_id,
        "event_id": stored.incident.event_id,
        "url": issue_url(stored.incident.issue_id),
        "duplicate": not stored.created,
    }
    return Status(202 if stored.created else 200, body)


@api.post(
    "/incidents/batch",
    response={200: dict, 202: dict, 400: dict},
    summary="Report many incidents in one request",
    description=(
        "Each item of `incidents` is an incident as for `POST /incidents` and is accepted or "
        "refused on its own: `results[i].status` is 202 (stored), 200 (a retry of a stored "
        "event_id) or 400 (with `detail`). The response is 202 when anything new was stored, "
        "200 when all were retries, 400 when no item was valid. A batch of N spends N tokens "
        "of the rate limit; an `Idempotency-Key` header covers the items by position."
    ),
)
def post_incidents(request: HttpRequest, batch: BatchIn) -> Any:
    key = key_of(request)
    if len(batch.incidents) > (most := max_items()):
        return error_response(
            400, ITEMS_LOC, f"{len(batch.incidents)} incidents; send at most {most} per request"
        )
    try:
        idem = _idempotency_key(request, 48)
    except ValueError as exc:
        return error_response(400, ["header", "Idempotency-Key"], str(exc))
    if (refused := _rate_limited(key, len(batch.incidents))) is not None:
        return refused
    outcome = accept_batch(key.project, batch.incidents, idempotency_key=idem)
    return Status(outcome.status, outcome.body)


class IncidentQuery(Schema):
    event_id: str | None = Field(
        None,
        description="The id a Sentry SDK returned or the JSON API answered; UUIDs "
        "match with or without dashes, in any case.",
    )
    service: str | None = None
    issue_id: int | None = None
    since: Timestamp | None = Field(None, description="Received at or after this time.")
    limit: int = Field(50, description="Page size, 1 to 200.")
    offset: int = 0


@api.get(
    "/incidents",
    response=IncidentPage,
    summary="Incidents, newest first; find one by the event id an SDK returned",
)
def list_incidents(request: HttpRequest, filters: Query[IncidentQuery]) -> Any:
    count, rows = find_incidents(key_of(request).project, IncidentFilters(**filters.dict()))
    return {"count": count, "results": [incident_dict(i) for i in rows]}


@api.get("/incidents/{incident_id}", response=dict, summary="One incident, parsed")
def get_incident(request: HttpRequest, incident_id: int) -> Any:
    incident = Incident.objects.filter(pk=incident_id, project=key_of(request).project).first()
    return incident_dict(incident) if incident else _not_found("incident", incident_id)


class IssueFilters(Schema):
    status: Issue.Status | None = None
    service: str | None = None
    model_id: str | None = None
    error_type: str | None = None
    since: Timestamp | None = None
    limit: int = 50
    offset: int = 0


@api.get("/issues", response=dict, summary="Issues, most recent activity first")
def list_issues(request: HttpRequest, filters: Query[IssueFilters]) -> Any:
    qs = Issue.objects.filter(project=key_of(request).project)
    for field in ("status", "service", "model_id", "error_type"):
        if (value := getattr(filters, field)) is not None:
            qs = qs.filter(**{field: value})
    if filters.since is not None:
        qs = qs.filter(last_seen__gte=filters.since)
    limit = max(1, min(filters.limit, 200))
    offset = max(0, filters.offset)
    rows = qs.order_by("-last_seen", "-pk")[offset : offset + limit]
    return {"count": qs.count(), "results": [issue_dict(i) for i in rows]}


@api.get("/issues/{issue_id}", response=dict, summary="One issue with its latest incidents")
def get_issue(request: HttpRequest, issue_id: int) -> Any:
    issue = Issue.objects.filter(pk=issue_id, project=key_of(request).project).first()
    if issue is None:
        return _not_found("issue", issue_id)
    latest = issue.incidents.order_by("-received_at")[:20]
    return {**issue_dict(issue), "incidents": [incident_dict(i) for i in latest]}
