"""`POST /otlp/v1/logs` and `/otlp/v1/traces`: OpenTelemetry exporters send incidents here.

Point an OTLP/HTTP exporter at `<rootcause>/otlp` with the header
`Authorization: Bearer <api key>`. The order of work keeps what an unauthenticated caller
can cost small: the size is checked from the headers, the key before the body is
decompressed or parsed, and the rate limit before anything is stored. Exceptions become
incidents through the same accept path as `POST /api/v1/incidents/batch` (inbox, or the
spool while the database is away); everything else is acknowledged and dropped.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from ingest import metrics, ratelimit
from ingest.batch import accept_batch
from ingest.content_encoding import BodyError, BodyTooLarge, decode
from ingest.inbox.accept import InboxUnavailable
from ingest.key_cache import Unverifiable
from ingest.keys import authenticate
from ingest.limits import OVER_LIMIT
from ingest.models import ApiKey
from ingest.otlp import answers, protobuf
from ingest.otlp.decode import PROTOBUF, OtlpError, Signal, encoding, from_json
from ingest.otlp.mapping import MAX_RECORDS, find_incidents


class _Refused(Exception):
    def __init__(self, status: int, msg: str, retry_after: int = 0) -> None:
        super().__init__(msg)
        self.status, self.msg, self.retry_after = status, msg, retry_after


def _limit() -> int:
    return int(settings.RCA_OTLP_MAX_BYTES)


def _key(request: HttpRequest) -> ApiKey:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise _Refused(401, "send 'Authorization: Bearer <api key>' (the exporter's headers)")
    try:
        key = authenticate(token)
    except Unverifiable as exc:
        raise _Refused(503, str(exc), exc.retry_after) from None
    if key is None:
        raise _Refused(401, "unknown or revoked API key")
    return key


def _body(request: HttpRequest) -> bytes:
    limit = _limit()
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise _Refused(400, "Content-Length is not a number") from None
    if request.META.get(OVER_LIMIT) or length > limit:
        raise _Refused(413, f"the body is larger than the limit of {limit} bytes")
    try:
        return decode(request.body, request.headers.get("Content-Encoding"), limit)
    except BodyTooLarge as exc:
        raise _Refused(413, str(exc)) from None
    except BodyError as exc:
        raise _Refused(400, str(exc)) from None


def _export(request: HttpRequest, signal: Signal) -> HttpResponse:
    media = encoding(request.content_type)
    try:
        key = _key(request)
        if media is None:
            raise _Refused(415, "send application/x-protobuf or application/json (OTLP/HTTP)")
        try:
            body = _body(request)
            export = protobuf.decode(signal, body) if media == PROTOBUF else from_json(signal, body)
            found = find_incidents(signal, export)
        except OtlpError as exc:
            raise _Refused(400, str(exc)) from None
        incidents = found.incidents[: int(settings.RCA_MAX_BATCH)]
        over = len(found.incidents) - len(incidents)
        if not incidents:
            return answers.exported(signal, media, why=_truncated(found.truncated))
        limit = ratelimit.take(f"key:{key.pk}", len(incidents))
        if not limit.allowed:
            raise _Refused(429, "rate limit for this key exceeded", limit.retry_after)
        try:
            outcome = accept_batch(key.project, incidents, source="otlp")
        except InboxUnavailable as exc:
            raise _Refused(exc.status, exc.msg, exc.retry_after) from None
    except _Refused as refused:
        metrics.count_refusal(refused.status)
        return answers.refused(refused.status, refused.msg, media, refused.retry_after)
    rejected = over + int(outcome.body["rejected"])
    why = "; ".join(
        part
        for part in (
            f"{over} exceptions over the {len(incidents)} one request may carry" if over else "",
            _first_problem(outcome.body) if outcome.body["rejected"] else "",
            _truncated(found.truncated),
        )
        if part
    )
    return answers.exported(signal, media, rejected, why)


def _truncated(truncated: bool) -> str:
    return f"only the first {MAX_RECORDS} records were read" if truncated else ""


def _first_problem(body: dict[str, object]) -> str:
    for result in body.get("results") or []:  # type: ignore[attr-defined]
        if isinstance(result, dict) and result.get("status") == 400:
            item = result["detail"][0]
            return f"an exception was not a valid incident: {item['msg']} at {item['loc']}"
    return ""


@csrf_exempt
@require_POST
def logs(request: HttpRequest) -> HttpResponse:
    return _export(request, "logs")


@csrf_exempt
@require_POST
def traces(request: HttpRequest) -> HttpResponse:
    return _export(request, "traces")
