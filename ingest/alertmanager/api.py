"""``POST /api/v1/alertmanager``: Alertmanager's webhook receiver, with the project's key.

A router that ``webapp/api.py`` mounts next to the incidents API; thin: bound, rate-limit,
call `receive`, answer. Invalid payloads are refused with the path of the bad field
(django-ninja validates `AlertmanagerIn`: ``["body", "payload", "alerts", 0, "status"]``).
"""

from __future__ import annotations

from typing import Any

from ninja import Field, Router, Schema, Status

from ingest.alertmanager.receive import receive
from ingest.alertmanager.schema import AlertmanagerIn
from ingest.auth import key_of, rate_limited
from ingest.errors import error_response, refusals
from ingest.inbox.accept import InboxUnavailable

router = Router(tags=["alertmanager"])


class AlertmanagerAccepted(Schema):
    accepted: int = Field(description="Firing alerts accepted as new incidents.")
    duplicates: int = Field(
        description="Firing alerts accepted before (Alertmanager's re-sends): not stored again."
    )
    resolved: int = Field(description="Open issues this notification's resolved alerts resolved.")
    event_ids: list[str] = Field(
        description="The firing alerts' incident event ids, in order "
        "(find them with `GET /api/v1/incidents?event_id=`)."
    )


@router.post(
    "/alertmanager",
    response={
        200: AlertmanagerAccepted,
        202: AlertmanagerAccepted,
        **refusals(400, 401, 413, 415, 429, 503),
    },
    summary="Alertmanager webhook receiver (payload version 4)",
    description=(
        "Point an Alertmanager `webhook_configs` receiver here with the project's key as "
        "`http_config.authorization.credentials`. Each firing alert becomes an incident "
        "(service from the `service` label, else `job`; error type from `alertname`; message "
        "from the `summary` and `description` annotations; labels kept as tags), grouped into "
        "one issue per alert fingerprint. Re-sends of a firing alert are stored once. A "
        "resolved alert resolves its issue. 202 when a new incident was accepted, else 200; "
        "503 (Retry-After) when the database is away and the spool full. "
        "At most RCA_MAX_BATCH alerts per request; each spends one token of the rate limit."
    ),
)
def post_alertmanager(request: Any, payload: AlertmanagerIn) -> Any:
    key = key_of(request)  # at most max_items() alerts: AlertmanagerIn counts them first
    if (refused := rate_limited(key, len(payload.alerts))) is not None:
        return refused
    try:
        out = receive(key.project, payload)
    except InboxUnavailable as exc:
        return error_response(exc.status, [], exc.msg, Retry_After=str(exc.retry_after))
    return Status(202 if out.accepted else 200, AlertmanagerAccepted(**out.__dict__))
