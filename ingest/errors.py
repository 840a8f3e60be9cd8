"""API errors users can act on: `{"detail": [{"loc": [...], "msg": ...}]}` with the right status.

One shape for every refusal of the JSON API (and of the Sentry endpoints): `ApiError` is
that shape as a schema, so each operation's OpenAPI entry shows it per status code.
"""

from __future__ import annotations

import re
from typing import Any

from django.http import JsonResponse
from pydantic import BaseModel

_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# pydantic names union members inside `loc`; they mean nothing to a client.
_TYPE_TAGS = {"str", "int", "float", "bool", "dict", "list", "none", "json", "datetime"}


class ErrorItem(BaseModel):
    """One problem: where it is (`["body", "incident", "service"]`, `["header", ...]`) and why."""

    loc: list[str | int]
    msg: str


class ApiError(BaseModel):
    """What every refused request answers: at most 50 problems, each with its path."""

    detail: list[ErrorItem]


def refusals(*codes: int) -> dict[int, type[ApiError]]:
    """`response=` entries for the status codes an operation may refuse with."""
    return dict.fromkeys(codes, ApiError)


def clean_loc(loc: Any) -> list[str | int]:
    """Keep the path a client would write (`body.logs.0`), drop pydantic's union tags."""
    out: list[str | int] = []
    for part in loc if isinstance(loc, (list, tuple)) else [loc]:
        if (
            isinstance(part, int)
            or isinstance(part, str)
            and _FIELD.match(part)
            and part not in _TYPE_TAGS
        ):
            out.append(part)
    return out


def detail(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Deduplicate pydantic/ninja errors into `{loc, msg}` items (a union fails per member)."""
    seen: dict[tuple[str | int, ...], dict[str, Any]] = {}
    for err in errors:
        loc = clean_loc(err.get("loc", []))
        key = tuple(loc)
        msg = str(err.get("msg", "invalid value"))
        if key in seen:
            if msg not in seen[key]["msg"]:
                seen[key]["msg"] += f"; or: {msg}"
            continue
        seen[key] = {"loc": loc, "msg": msg}
    return list(seen.values())[:50]


def error_response(status: int, loc: list[str | int], msg: str, **headers: str) -> JsonResponse:
    """An `ApiError` answer; `Retry_After="3"` becomes the header `Retry-After: 3`."""
    response = JsonResponse({"detail": [{"loc": loc, "msg": msg}]}, status=status)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response
