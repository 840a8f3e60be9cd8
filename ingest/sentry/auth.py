"""Finding the project key in a Sentry SDK request, and writing the DSN users paste into it.

SDKs disagree on where the key goes: the Python SDK sends an ``X-Sentry-Auth`` header,
browser SDKs put ``?sentry_key=`` in the URL (no custom headers on beacons), and newer
SDKs also copy the whole DSN into the envelope header. We accept all three, in that order,
so any stock SDK works against our endpoint without configuration.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.utils.datastructures import CaseInsensitiveMapping

# Sentry keys are 32 hex digits; we allow any short token so that keys we mint ourselves
# fit, but nothing that could smuggle separators or whitespace into logs and lookups.
_KEY = re.compile(r"[A-Za-z0-9_\-]{1,128}")
_AUTH_HEADERS = ("x-sentry-auth", "http_x_sentry_auth", "authorization", "http_authorization")


def _valid_key(value: Any) -> str | None:
    if isinstance(value, str) and _KEY.fullmatch(value.strip()):
        return value.strip()
    return None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """Look a header up case-insensitively: plain dicts in tests are not Django's headers.
    Django's are looked up at once (they are case-insensitive already): scanning them all
    for each name was a few percent of an envelope request's CPU."""
    if isinstance(headers, CaseInsensitiveMapping):
        value = headers.get(name)
        return value if isinstance(value, str) else None
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name and isinstance(value, str):
            return value
    return None


def _key_from_auth_header(value: str) -> str | None:
    """Read ``sentry_key`` from ``Sentry sentry_key=..., sentry_version=7, ...``."""
    text = value.strip()
    if text[:7].lower() != "sentry ":
        return None
    for part in text[7:].split(","):
        name, sep, item = part.partition("=")
        if sep and name.strip().lower() == "sentry_key":
            return _valid_key(item)
    return None


def _key_from_dsn(dsn: Any) -> str | None:
    """The public key is the user part of ``http://<key>[:<secret>]@host/<project_id>``."""
    if not isinstance(dsn, str):
        return None
    try:
        return _valid_key(urlsplit(dsn.strip()).username)
    except ValueError:
        return None


def public_key_from_request(
    headers: Mapping[str, str],
    query: Mapping[str, str],
    envelope_header: dict[str, Any] | None,
) -> str | None:
    """Return the project's public key from whichever place the SDK put it, or None."""
    for name in _AUTH_HEADERS:
        value = _header(headers, name)
        key = _key_from_auth_header(value) if value else None
        if key:
            return key
    key = _valid_key(query.get("sentry_key"))
    if key:
        return key
    if isinstance(envelope_header, dict):
        return _key_from_dsn(envelope_header.get("dsn"))
    return None


def build_dsn(public_key: str, host: str, project_id: int | str, scheme: str = "http") -> str:
    """Compose the DSN a user configures in ``sentry_sdk.init(dsn=...)`` for a project.

    ``host`` may carry a port and a path prefix (``example.org:8000/rootcause``); the SDK
    then posts to ``<scheme>://<host>/api/<project_id>/envelope/``.
    """
    return f"{scheme}://{public_key}@{host.strip().strip('/')}/{project_id}"
