"""How the JSON API knows who is calling: `Authorization: Bearer <api key>`, one way for all.

Every keyed operation (ingest's and rca's) uses `ApiKeyAuth`; a handler reads the caller's
key with `key_of`, and a refused key is answered by `unauthorised` (an `ApiError`, 401).
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from ninja.errors import AuthenticationError
from ninja.security import HttpBearer

from ingest import keys, ratelimit
from ingest.errors import error_response
from ingest.models import ApiKey


class ApiKeyAuth(HttpBearer):
    """A live project key (see `ingest.keys`); its project scopes everything the call sees."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiKey | None:
        return keys.authenticate(token)


def key_of(request: HttpRequest) -> ApiKey:
    """The authenticated key (django-ninja sets `request.auth` after `ApiKeyAuth` succeeds)."""
    key = getattr(request, "auth", None)
    if not isinstance(key, ApiKey):
        raise AuthenticationError()  # an operation mounted without auth: refuse, never guess
    return key


def unauthorised(request: HttpRequest, exc: AuthenticationError) -> JsonResponse:
    """401 saying what to send: no header at all, or a key that is unknown or revoked."""
    sent = "Authorization" in request.headers
    msg = (
        "unknown or revoked API key"
        if sent
        else "send 'Authorization: Bearer <api key>' (create keys in the project settings)"
    )
    response = error_response(401, ["header", "Authorization"], msg)
    response["WWW-Authenticate"] = "Bearer"
    return response


def rate_limited(key: ApiKey, cost: int = 1) -> JsonResponse | None:
    """None when the key may spend `cost` tokens now, else the 429 with Retry-After that
    every keyed ingest operation answers (one token per incident or alert)."""
    limit = ratelimit.take(f"key:{key.pk}", cost)
    if limit.allowed:
        return None
    return error_response(
        429,
        ["header", "Authorization"],
        f"rate limit for this key exceeded; retry in {limit.retry_after} s",
        Retry_After=str(limit.retry_after),
    )
