"""API errors users can act on: `{"detail": [{"loc": [...], "msg": ...}]}` with the right status."""

from __future__ import annotations

import re
from typing import Any

from django.http import JsonResponse

_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# pydantic names union members inside `loc`; they mean nothing to a client.
_TYPE_TAGS = {"str", "int", "float", "bool", "dict", "list", "none", "json", "datetime"}


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
    seen: dict[tuple, dict[str, Any]] = {}
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
    response = JsonResponse({"detail": [{"loc": loc, "msg": msg}]}, status=status)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response
