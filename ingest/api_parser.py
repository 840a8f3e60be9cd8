"""The JSON API's body parser: deep nesting is refused by path before ``json.loads`` runs."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest
from ninja.parser import Parser

from ingest.json_depth import TooDeep, check_depth

# django-ninja names the body parameter inside `loc` (see ingest/api.py's handlers).
_BODY_LOC: dict[str, list[str | int]] = {
    "/api/v1/incidents": ["body", "incident"],
    "/api/v1/incidents/batch": ["body", "batch"],
}


class DepthLimitedParser(Parser):
    """Raises ``TooDeep``; ninja wraps it in an ``HttpError`` whose ``__cause__`` it stays."""

    def parse_body(self, request: HttpRequest) -> Any:
        check_depth(request.body, _BODY_LOC.get(request.path, ["body"]))
        return json.loads(request.body)


def too_deep_cause(exc: BaseException) -> TooDeep | None:
    """The ``TooDeep`` behind ninja's 'Cannot parse request body', if that is what it was."""
    cause = exc.__cause__
    return cause if isinstance(cause, TooDeep) else None
