"""Sentry events are mapped by the inbox processor, not by the request that accepts them.

Issue 19: a one-event envelope cost gunicorn ~0.3 ms more CPU than a one-incident JSON
post, and most of it (0.24 ms a request, measured with thread CPU time in the served
handler, `bench/request_cpu.py`) was the mapping onto our schema and its validation, run
with cold caches between two requests. The processor maps a claimed batch in one tight
loop (0.06-0.13 ms an event), off the request's path, as Sentry's Relay processes after
it has accepted. The request still refuses what is not an event (not a JSON object, no
field of a Sentry event) with its reason, acknowledges transactions without storing them,
and fixes the event id, so a retry is answered 200 as before.

Nothing accepted can fail later for the schema's sake: `event_to_incident` never raises and
everything it produces validates (property-tested in tests/unit/test_sentry_mapping_*.py).
A bug meeting an odd event fails its row alone, which the processor keeps and counts
(`ingest/inbox/process.py`).

Rows keep only the fields the mapping reads (`MAPPED_FIELDS`; of `sdk` its name and
version; of a stack frame `FRAME_FIELDS`): an SDK's `modules`, `extra`, `request`,
`debug_meta`, its list of integrations, or the five lines of source before and after every
frame (`pre_context`, `post_context`: most of a Python event's bytes) would make the inbox
row larger for nothing.
"""

from __future__ import annotations

from typing import Any

from ingest.schema import IncidentIn
from ingest.sentry.mapping import event_id_of, event_to_incident

#: The inbox `source` of a raw Sentry event (<= 10 characters, as the column holds);
#: stored as an incident of source "sentry".
RAW_SOURCE = "sentry-raw"
STORED_SOURCE = "sentry"

#: The top-level fields `event_to_incident` reads (tests/unit/test_sentry_deferred.py holds
#: the mapping of a pruned event equal to the mapping of the whole one).
MAPPED_FIELDS = frozenset(
    {
        "event_id", "timestamp", "platform", "level", "logger", "transaction", "server_name",
        "release", "environment", "tags", "fingerprint", "exception", "message", "logentry",
        "threads", "stacktrace", "breadcrumbs", "contexts", "sdk",
    }
)  # fmt: skip
#: The keys of a stack frame the mapping reads (`mapping._frame`).
FRAME_FIELDS = frozenset(
    {
        "abs_path", "filename", "function", "raw_function", "symbol", "lineno", "module",
        "package", "context_line", "in_app", "vars",
    }
)  # fmt: skip


def _lean_stack(stacktrace: Any) -> Any:
    """The stack trace with each frame cut to `FRAME_FIELDS`; anything else as it was."""
    if not isinstance(stacktrace, dict) or not isinstance(stacktrace.get("frames"), list):
        return stacktrace
    frames = [
        {key: value for key, value in frame.items() if key in FRAME_FIELDS}
        if isinstance(frame, dict)
        else frame
        for frame in stacktrace["frames"]
    ]
    return {**stacktrace, "frames": frames}


def _lean_members(container: Any) -> Any:
    """An `exception` or `threads` container (a list, or a dict of `values`) whose members'
    stack traces are lean; the members keep their other fields."""
    members = container.get("values") if isinstance(container, dict) else container
    if not isinstance(members, list):
        return container
    lean = [
        {**member, "stacktrace": _lean_stack(member["stacktrace"])}
        if isinstance(member, dict) and "stacktrace" in member
        else member
        for member in members
    ]
    return {**container, "values": lean} if isinstance(container, dict) else lean


def raw_payload(event: dict[str, Any], envelope_event_id: Any = None) -> dict[str, Any]:
    """What the inbox keeps of an accepted event: the fields the mapping reads, with the
    event id the mapping will give it (the envelope header's when the event has none), so
    the record is keyed, and a retry found, by the id the stored incident will carry."""
    kept = {key: value for key, value in event.items() if key in MAPPED_FIELDS}
    sdk = kept.get("sdk")
    if isinstance(sdk, dict):  # its integrations and packages lists are not read
        kept["sdk"] = {key: sdk[key] for key in ("name", "version") if key in sdk}
    for key in ("exception", "threads"):
        if key in kept:
            kept[key] = _lean_members(kept[key])
    if "stacktrace" in kept:
        kept["stacktrace"] = _lean_stack(kept["stacktrace"])
    event_id = event_id_of(event.get("event_id")) or event_id_of(envelope_event_id)
    if event_id:
        kept["event_id"] = event_id
    else:
        kept.pop("event_id", None)  # unusable: the record gets a new id, as the mapping would
    return kept


def incident_payload(raw: dict[str, Any]) -> dict[str, Any]:
    """The validated incident payload of an accepted event (as the request used to build)."""
    return IncidentIn.model_validate(event_to_incident(raw)).payload()
