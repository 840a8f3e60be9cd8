"""The JSON API's body parser: what is not JSON is refused (415), deep nesting by path (400).

django-ninja parses a body only for an operation that takes one, after it has matched the
method (405 first) and the key (401); its parser's error becomes an ``HttpError(400)``
whose ``__cause__`` is ours, which ``refusal_behind`` turns back into the right answer.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from ninja.parser import Parser

from ingest.errors import error_response
from ingest.json_depth import TooDeep, check_depth
from ingest.storable import json_loads

# django-ninja names the body parameter inside `loc` (see ingest/api.py's handlers).
_BODY_LOC: dict[str, list[str | int]] = {
    "/api/v1/incidents": ["body", "incident"],
    "/api/v1/incidents/batch": ["body", "batch"],
}


class NotJson(ValueError):
    """A body sent as something other than `application/json`."""

    def __init__(self, content_type: str) -> None:
        super().__init__(
            f"send JSON with 'Content-Type: application/json' (got {content_type or 'none'!r})"
        )


class JsonBodyParser(Parser):
    """Raises ``NotJson`` or ``TooDeep`` before ``json.loads`` sees the body."""

    def parse_body(self, request: HttpRequest) -> Any:
        content_type = (request.content_type or "").lower()
        if content_type != "application/json":
            raise NotJson(content_type)
        check_depth(request.body, _BODY_LOC.get(request.path, ["body"]))
        return json_loads(request.body)


def refusal_behind(exc: BaseException) -> JsonResponse | None:
    """The answer for a ``NotJson`` or ``TooDeep`` behind ninja's 'Cannot parse request body'."""
    return refusal_for(exc.__cause__)


def refusal_for(cause: BaseException | None) -> JsonResponse | None:
    """The answer for the parser's own errors (``NotJson``, ``TooDeep``); None for others."""
    if isinstance(cause, NotJson):
        return error_response(415, ["header", "Content-Type"], str(cause))
    if isinstance(cause, TooDeep):
        return error_response(400, cause.loc, str(cause))
    return None
