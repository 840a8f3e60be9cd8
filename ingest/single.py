"""`POST /api/v1/incidents` served by a plain Django view: the one-incident accept path.

Issue 19: a request through django-ninja spent about as much CPU in ninja's machinery
(its operation wrapper, a body model wrapping the incident, a temporal response, the
response model's validation and dump) as in accepting the incident. `post_incident` here
does the same steps by hand, in the same order and with the same answers: the bearer key
(`ingest.auth.ApiKeyAuth`, 401), the body (`ingest.api_parser`: 415 for another content
type, 400 for depth or JSON that does not parse), `IncidentIn` validated in Python mode as
ninja does (400 with pydantic's messages under `["body", "incident", ...]`), then
`accept_single`, which the ninja operation (`ingest/api.py`) calls too. The operation stays
registered with ninja for the OpenAPI document and the docs page; `webapp/urls.py` routes
the path's POST here and every other method (the `GET` list, a 405) to ninja's view.
tests/integration/test_single_post.py holds the two to the same answers for any body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from ninja.errors import AuthenticationError
from pydantic import ValidationError

from ingest.api_parser import JsonBodyParser, refusal_for
from ingest.auth import ApiKeyAuth, rate_limited, unauthorised
from ingest.batch import accepted_fields
from ingest.errors import detail, error_response
from ingest.inbox.accept import InboxUnavailable, accept
from ingest.models import ApiKey
from ingest.schema import EVENT_ID, IncidentIn

#: Where ninja puts the incident in an error's `loc` (its body parameter is `incident`).
BODY_LOC: tuple[str, ...] = ("body", "incident")
#: What ninja answers for a body its parser refused for another reason than ours.
CANNOT_PARSE = "Cannot parse request body"
#: ninja's content type for what it renders (`NinjaAPI.get_content_type()`).
JSON_UTF8 = "application/json; charset=utf-8"

_AUTH = ApiKeyAuth()
_PARSER = JsonBodyParser()
_EVENT_ID = re.compile(EVENT_ID)

View = Callable[[HttpRequest], HttpResponse]


def idempotency_key(request: HttpRequest, max_length: int) -> str | None:
    """The header's value; ValueError when it could not serve as an event id."""
    idem = request.META.get("HTTP_IDEMPOTENCY_KEY")  # request.headers builds all of them
    if idem is not None and (len(idem) > max_length or not _EVENT_ID.fullmatch(idem)):
        raise ValueError(f"use 1-{max_length} of [A-Za-z0-9._:-]")
    return idem


def unavailable(exc: InboxUnavailable) -> JsonResponse:
    """503 with Retry-After: neither the database nor the spool took the incidents (429: the
    inbox holds more than RCA_INBOX_MAX_ROWS waiting)."""
    return error_response(exc.status, [], exc.msg, Retry_After=str(exc.retry_after))


def accept_single(request: HttpRequest, key: ApiKey, incident: IncidentIn) -> HttpResponse:
    """Rate limit, Idempotency-Key, accept; 202 (new) or 200 (a retry) with its fields."""
    if (refused := rate_limited(key)) is not None:
        return refused
    try:
        idem = idempotency_key(request, 64)
    except ValueError as exc:
        return error_response(400, ["header", "Idempotency-Key"], str(exc))
    try:
        [one] = accept(key.project, [incident.payload()], idempotency_keys=[idem], single=True)
    except InboxUnavailable as exc:
        return unavailable(exc)
    body = json.dumps(accepted_fields(one))  # IncidentAccepted's fields, as ninja renders them
    return HttpResponse(body, status=202 if one.created else 200, content_type=JSON_UTF8)


def _invalid(errors: list[dict[str, Any]]) -> JsonResponse:
    return JsonResponse({"detail": detail(errors)}, status=400)


#: An empty body: ninja validates nothing then (a missing `incident`). Not None, which is
#: what a body of JSON `null` parses to: ninja validates that one (not a dictionary).
_EMPTY = object()


def _body(request: HttpRequest) -> Any:
    """The parsed body, :data:`_EMPTY` when there is none, or the refusal its parser's
    error becomes."""
    if not request.body:
        return _EMPTY
    try:
        return _PARSER.parse_body(request)
    except Exception as exc:  # as ninja's BodyModel: any parser error is a 400
        if (refusal := refusal_for(exc)) is not None:
            return refusal
        msg = f"{CANNOT_PARSE} ({exc})" if settings.DEBUG else CANNOT_PARSE
        return error_response(400, [], msg)


def _bearer_key(request: HttpRequest) -> ApiKey | None:
    """What `ApiKeyAuth` (ninja's `HttpBearer`) finds, read from the one header it needs."""
    sent = request.META.get("HTTP_AUTHORIZATION")
    if not sent:
        return None
    scheme, _, token = sent.partition(" ")
    if scheme.lower() != _AUTH.openapi_scheme:
        return None
    return _AUTH.authenticate(request, token)


def post_incident(request: HttpRequest) -> HttpResponse:
    """The POST: what `ingest.api.post_incident` answers under ninja, without ninja."""
    key = _bearer_key(request)
    if not isinstance(key, ApiKey):
        return unauthorised(request, AuthenticationError())
    request.auth = key  # type: ignore[attr-defined]  # as ninja sets it
    data = _body(request)
    if isinstance(data, HttpResponse):
        return data
    if data is _EMPTY:
        return _invalid([{"loc": BODY_LOC, "msg": "Field required"}])
    try:
        incident = IncidentIn.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        return _invalid([{"loc": BODY_LOC + tuple(e["loc"]), "msg": e["msg"]} for e in errors])
    return accept_single(request, key, incident)


def serving_post(other: View) -> View:
    """A view answering POST with `post_incident` and any other method with `other`."""

    @csrf_exempt
    def incidents(request: HttpRequest) -> HttpResponse:
        if request.method == "POST":
            return post_incident(request)
        return other(request)

    return incidents
