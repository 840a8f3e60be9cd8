"""Which Sentry events become incidents, and why any other is refused.

An SDK counts an event as delivered when the server answers 200, and no SDK reads a
reason in the body, so a 200 must mean "stored". Any event with an exception, a message
or a log entry is stored, and so is one with neither (Sentry keeps it as an unlabelled
event) as long as it is recognisably a Sentry event. What is left — a JSON object with
no field of a Sentry event — is refused with its reason; the receiver answers 400 when
nothing in the request was stored. Transactions are performance data, not failures:
they are acknowledged and not stored, as the envelope endpoint does with their items.

The mapping onto our schema and its validation run later, in the inbox processor
(`ingest/sentry/deferred.py` says why and what holds): an accepted payload here is the
event as the mapping will read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from ingest.sentry.deferred import raw_payload

# The attributes of Sentry's event payload (develop.sentry.dev, "Event Payloads").
EVENT_FIELDS = frozenset(
    {
        "event_id", "timestamp", "platform", "level", "logger", "transaction", "server_name",
        "release", "dist", "tags", "environment", "modules", "extra", "fingerprint", "errors",
        "exception", "message", "logentry", "threads", "stacktrace", "breadcrumbs",
        "contexts", "request", "user", "sdk", "debug_meta", "culprit",
    }
)  # fmt: skip
NOT_AN_EVENT = (
    "the event has none of the fields of a Sentry event "
    "(event_id, exception, message, logentry, timestamp, ...)"
)


class RejectedEvent(TypedDict):
    """An event item that was not stored (its index in the request) and why."""

    item: int
    msg: str


@dataclass
class Accepted:
    payloads: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[RejectedEvent] = field(default_factory=list)
    transactions: int = 0


def accept_events(events: list[Any], envelope_event_id: Any = None) -> Accepted:
    """The payloads to queue (`deferred.raw_payload`) for the events that can be stored;
    reasons for the rest."""
    accepted = Accepted()
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            accepted.rejected.append({"item": index, "msg": "the event is not a JSON object"})
            continue
        if event.get("type") == "transaction":
            accepted.transactions += 1
            continue
        if not EVENT_FIELDS.intersection(event):
            accepted.rejected.append({"item": index, "msg": NOT_AN_EVENT})
            continue
        accepted.payloads.append(
            raw_payload(event, envelope_event_id if len(events) == 1 else None)
        )
    return accepted
