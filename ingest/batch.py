"""Batched ingestion: many incidents in one request, each accepted or refused on its own.

Clients that buffer (log shippers, SDK transports, a service flushing after an outage)
send one request instead of hundreds; accepting them is one inbox insert for the whole
batch (`ingest/inbox/`), and the processor stores them as a batch too (`store.py`). One bad
incident does not sink the rest: like a bulk API, every item gets its own status, and only
the valid ones are accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from pydantic import ValidationError

from ingest import metrics, ratelimit
from ingest.errors import detail
from ingest.inbox.accept import Outcome, accept
from ingest.models import Project
from ingest.schema import IncidentIn
from ingest.serializers import issue_url

ITEMS_LOC: list[str | int] = ["body", "batch", "incidents"]


@dataclass
class BatchOutcome:
    status: int  # 202 something new accepted, 200 only retries, 400 none valid
    body: dict[str, Any]


def accepted_fields(one: Outcome) -> dict[str, Any]:
    """The fields of `IncidentAccepted` for one outcome (ingest/responses.py says what they
    mean): the issue's page once the issue is known, else the lookup by event id."""
    if one.issue_id is not None:
        url = issue_url(one.issue_id)
    else:
        url = f"{settings.RCA_BASE_URL}/api/v1/incidents?{urlencode({'event_id': one.event_id})}"
    return {
        "incident_id": one.incident_id,
        "issue_id": one.issue_id,
        "event_id": one.event_id,
        "url": url,
        "duplicate": not one.created,
    }


def max_items() -> int:
    """RCA_MAX_BATCH, but never above the rate limit's burst: a larger batch could never pass."""
    most = int(settings.RCA_MAX_BATCH)
    if settings.RCA_RATE_LIMIT_PER_MINUTE > 0:
        most = min(most, int(ratelimit.burst()))
    return most


def _item_errors(index: int, exc: ValidationError) -> list[dict[str, Any]]:
    return [
        {**err, "loc": [*ITEMS_LOC, index, *err["loc"]]}
        for err in detail([dict(e) for e in exc.errors(include_url=False)])
    ]


def item_event_id(idempotency_key: str | None, index: int) -> str | None:
    """A batch's Idempotency-Key covers its items by position: resent, nothing is stored twice."""
    return f"{idempotency_key}:{index}" if idempotency_key else None


def accept_batch(
    project: Project,
    items: list[Any],
    *,
    idempotency_key: str | None = None,
    source: str = "api",
) -> BatchOutcome:
    """Validate each item, accept the valid ones in one insert, report per item.

    Raises `InboxUnavailable` (nothing accepted) when neither database nor spool takes them.
    """
    results: list[dict[str, Any] | None] = [None] * len(items)
    valid: list[tuple[int, IncidentIn]] = []
    for index, item in enumerate(items):
        try:
            valid.append((index, IncidentIn.model_validate(item)))
        except ValidationError as exc:
            results[index] = {"index": index, "status": 400, "detail": _item_errors(index, exc)}
    stored = accept(
        project,
        [incident.payload() for _, incident in valid],
        source=source,
        idempotency_keys=[item_event_id(idempotency_key, index) for index, _ in valid],
    )
    for (index, _), one in zip(valid, stored, strict=True):
        status = 202 if one.created else 200
        results[index] = {"index": index, "status": status, **accepted_fields(one)}
    accepted = sum(1 for one in stored if one.created)
    rejected = len(items) - len(valid)
    body: dict[str, Any] = {
        "accepted": accepted,
        "duplicates": len(valid) - accepted,
        "rejected": rejected,
        "results": results,
    }
    if not valid:  # an error like any other: every item's problems, with their paths
        body["detail"] = [d for r in results if r for d in r["detail"]][:50]
        return BatchOutcome(400, body)
    if rejected:  # the request was accepted, these items were not
        metrics.INGEST_REJECTED.labels(metrics.INVALID_ITEM).inc(rejected)
    return BatchOutcome(202 if accepted else 200, body)
