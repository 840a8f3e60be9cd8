"""The JSON API's body parser: what is not JSON is refused (415), deep nesting by path (400).

A compressed body (``Content-Encoding``) is decoded first, within the path's body limit
(``ingest/content_encoding.py``: 413 past it, 400 for broken or unknown encodings); a
body that does not parse is a 400 at ``["body"]`` with json's reason. The parser runs
after the key is checked, so none of this is work done for a stranger.

django-ninja parses a body only for an operation that takes one, after it has matched the
method (405 first) and the key (401); its parser's error becomes an ``HttpError(400)``
whose ``__cause__`` is ours, which ``refusal_behind`` turns back into the right answer.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from ninja.parser import Parser

from ingest.content_encoding import BodyError, decode
from ingest.errors import error_response
from ingest.json_depth import TooDeep, check_depth
from ingest.limits import body_limit
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
    """Raises ``NotJson``, ``BodyError`` or ``TooDeep`` before ``json.loads`` sees the body,
    and ``BodyError`` for a body that is not JSON."""

    def parse_body(self, request: HttpRequest) -> Any:
        content_type = (request.content_type or "").lower()
        if content_type != "application/json":
            raise NotJson(content_type)
        body = request.body
        if coding := request.META.get("HTTP_CONTENT_ENCODING"):
            body = decode(body, coding, body_limit(request.path))
        check_depth(body, _BODY_LOC.get(request.path, ["body"]))
        try:
            return json_loads(body)
        except ValueError as exc:  # UnicodeDecodeError is one
            raise BodyError(f"the body is not valid JSON: {exc}") from None


def refusal_behind(exc: BaseException) -> JsonResponse | None:
    """The answer for our parser's error behind ninja's 'Cannot parse request body'."""
    return refusal_for(exc.__cause__)


def refusal_for(cause: BaseException | None) -> JsonResponse | None:
    """The answer for the parser's own errors (``NotJson``, ``TooDeep``, ``BodyError``);
    None for others."""
    if isinstance(cause, NotJson):
        return error_response(415, ["header", "Content-Type"], str(cause))
    if isinstance(cause, (TooDeep, BodyError)):
        return error_response(getattr(cause, "status", 400), cause.loc, str(cause))
    return None
