"""Ingest's part of the JSON API (django-ninja): POST incidents, read incidents and issues.

A router: ``webapp/api.py`` mounts it (and rca's) on the one API, which authenticates
every operation with ``ingest.auth.ApiKeyAuth``. Thin handlers; each operation declares
its answer per status code, refusals included (``ApiError``).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from ninja import Field, Query, Router, Schema, Status

from ingest.auth import key_of, rate_limited
from ingest.batch import ITEMS_LOC, accept_batch, max_items
from ingest.errors import ApiError, error_response, refusals
from ingest.inbox.accept import InboxUnavailable
from ingest.incident_list import MAX_OFFSET, MAX_PAGE, IncidentFilters, find_incidents
from ingest.issue_list import IssueFilters, find_issues
from ingest.models import Incident, Issue
from ingest.responses import (
    BatchAccepted,
    BatchRefused,
    IncidentAccepted,
    IncidentOut,
    IncidentPage,
    IssueDetail,
    IssuePage,
)
from ingest.schema import BatchIn, IncidentIn, Timestamp
from ingest.serializers import incident_dict, issue_dict
from ingest.single import accept_single, idempotency_key, unavailable

router = Router(tags=["incidents"])

#: What a POST may be refused with: invalid (400), no key (401), too large (413),
#: not JSON (415), over the key's rate limit or the inbox's bound (429), nowhere to keep it
#: (503: the database is away and the spool full).
POST_REFUSALS = refusals(400, 401, 413, 415, 429, 503)
#: What a read may be refused with: an invalid parameter (400), no key (401).
READ_REFUSALS = refusals(400, 401)


def _not_found(what: str, ident: int) -> JsonResponse:
    return error_response(404, ["path", "id"], f"no {what} {ident} in this project")


@router.post(
    "/incidents",
    response={200: IncidentAccepted, 202: IncidentAccepted, **POST_REFUSALS},
    summary="Report an incident",
    description="202 when accepted: the incident is stored within milliseconds, and until then "
    "`incident_id` and `issue_id` are null (find it by `event_id`). 200 when it repeats an "
    "`event_id` (or `Idempotency-Key`) accepted before, which is not stored again; its ids are "
    "given once it is stored. 429 (Retry-After) when more than RCA_INBOX_MAX_ROWS incidents "
    "wait to be processed, 503 (Retry-After) when the database is away and the spool full.",
)
def post_incident(request: HttpRequest, incident: IncidentIn) -> Any:
    # Documents the operation; `webapp/urls.py` serves its POSTs with `ingest.single`'s
    # plain view, which answers the same (tests/integration/test_single_post.py).
    return accept_single(request, key_of(request), incident)


@router.post(
    "/incidents/batch",
    response={
        200: BatchAccepted,
        202: BatchAccepted,
        **POST_REFUSALS,
        400: BatchRefused | ApiError,
    },
    summary="Report many incidents in one request",
    description=(
        "Each item of `incidents` is an incident as for `POST /incidents` and is accepted or "
        "refused on its own: `results[i].status` is 202 (accepted), 200 (a retry of an "
        "event_id accepted before) or 400 (with `detail`); ids not known yet are null, as for "
        "`POST /incidents`. The response is 202 when anything new was accepted, "
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
        idem = idempotency_key(request, 48)
    except ValueError as exc:
        return error_response(400, ["header", "Idempotency-Key"], str(exc))
    if (refused := rate_limited(key, len(batch.incidents))) is not None:
        return refused
    try:
        outcome = accept_batch(key.project, batch.incidents, idempotency_key=idem)
    except InboxUnavailable as exc:
        return unavailable(exc)
    if outcome.status == 400:  # as built: its items' `detail` already name their paths
        return JsonResponse(outcome.body, status=400)
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
    limit: int = Field(50, description=f"Page size, 1 to {MAX_PAGE} (others are clamped).")
    offset: int = Field(0, description=f"Rows to skip; past {MAX_OFFSET:,} the page is empty.")


@router.get(
    "/incidents",
    response={200: IncidentPage, **READ_REFUSALS},
    summary="Incidents, newest first; find one by the event id an SDK returned",
)
def list_incidents(request: HttpRequest, filters: Query[IncidentQuery]) -> Any:
    count, rows = find_incidents(key_of(request).project, IncidentFilters(**filters.dict()))
    return {"count": count, "results": [incident_dict(i) for i in rows]}


@router.get(
    "/incidents/{incident_id}",
    response={200: IncidentOut, **refusals(400, 401, 404)},
    summary="One incident, parsed",
)
def get_incident(request: HttpRequest, incident_id: int) -> Any:
    incident = Incident.objects.filter(pk=incident_id, project=key_of(request).project).first()
    return incident_dict(incident) if incident else _not_found("incident", incident_id)


class IssueQuery(Schema):
    status: Issue.Status | None = None
    service: str | None = None
    model_id: str | None = None
    error_type: str | None = None
    since: Timestamp | None = Field(None, description="Last seen at or after this time.")
    limit: int = Field(50, description=f"Page size, 1 to {MAX_PAGE} (others are clamped).")
    offset: int = Field(0, description=f"Rows to skip; past {MAX_OFFSET:,} the page is empty.")


@router.get(
    "/issues",
    response={200: IssuePage, **READ_REFUSALS},
    summary="Issues, most recent activity first",
)
def list_issues(request: HttpRequest, filters: Query[IssueQuery]) -> Any:
    count, rows = find_issues(key_of(request).project, IssueFilters(**filters.dict()))
    return {"count": count, "results": [issue_dict(i) for i in rows]}


@router.get(
    "/issues/{issue_id}",
    response={200: IssueDetail, **refusals(400, 401, 404)},
    summary="One issue with its latest incidents",
)
def get_issue(request: HttpRequest, issue_id: int) -> Any:
    issue = Issue.objects.filter(pk=issue_id, project=key_of(request).project).first()
    if issue is None:
        return _not_found("issue", issue_id)
    latest = issue.incidents.order_by("-received_at")[:20]
    return {**issue_dict(issue), "incidents": [incident_dict(i) for i in latest]}
