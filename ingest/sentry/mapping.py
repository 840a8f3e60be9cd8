"""Mapping a Sentry event, as any Sentry SDK sends it, onto Rootcause's incident schema.

Services that already report to Sentry can point their DSN at us unchanged, so this is
their whole integration: anything the SDK sends that we understand becomes an incident
field, and anything odd is skipped rather than refused — the endpoint is public and one
malformed field must not cost the user the rest of the report. An event that says
nothing we can title (no exception, no message) is still kept, as Sentry keeps it, under
the placeholder message ``<unlabeled event>``.
The result is the same dict a client would POST to ``/api/v1/incidents``: it still goes
through validation and secret scrubbing (frame ``vars`` especially) afterwards.
"""

from __future__ import annotations

import re
from typing import Any, NotRequired, TypedDict

from ingest.event_ids import normalise_event_id
from ingest.parsing.frames import MAX_FRAMES, make_frame
from ingest.sentry.exception_type import exception_type
from ingest.sentry.logentry import event_message, event_template
from ingest.sentry.ml_context import inference_context, resource_impact, shape_diff
from ingest.sentry.values import JsonObject, as_dict, as_repr, count, first, iso_time, text

# Bounds of ingest/schema.py: a value past them would make the whole event a 400, so we
# cut or drop it here instead.
MAX_EXCEPTIONS = 50
MAX_LOGS = 1000
MAX_TAGS = 100
MAX_TAG_KEY = 100
MAX_SHORT = 255
MAX_MESSAGE = 65_536
MAX_LINENO = 10_000_000
MAX_VARS = 100
MAX_FINGERPRINT = 20
UNLABELED = "<unlabeled event>"
_EVENT_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_RELATIONS = {"__cause__": "cause", "__context__": "context", "": "cause"}


class SentryException(TypedDict):
    """One entry of the ``stacktrace`` chain we send on: the schema's exception object.

    Frames stay plain dicts because a Sentry frame may carry ``vars``, which the schema
    accepts and scrubs but ``Frame`` has no field for.
    """

    type: str
    message: str
    frames: list[dict[str, Any]]
    relation: str | None
    module: NotRequired[str]


def _tags(value: Any) -> dict[str, str]:
    """Tags arrive as ``{"k": "v"}`` or ``[["k", "v"], ...]``; we keep a flat str->str."""
    if isinstance(value, dict):
        pairs: list[Any] | tuple[Any, ...] = list(value.items())
    elif isinstance(value, (list, tuple)):
        pairs = value
    else:
        return {}
    tags: dict[str, str] = {}
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            continue
        key, item = text(pair[0], MAX_TAG_KEY), text(pair[1])
        if key and pair[1] is not None and len(tags) < MAX_TAGS:
            tags[key] = item
    return tags


def _sentry_tags(event: JsonObject) -> dict[str, str]:
    """Where the event came from, as tags: the schema has no columns for these."""
    sdk = as_dict(event.get("sdk"))
    found = {
        "release": event.get("release"),
        "platform": event.get("platform"),
        "level": event.get("level"),
        "logger": event.get("logger"),
        "server_name": event.get("server_name"),
        "transaction": event.get("transaction"),
        "sdk.name": sdk.get("name"),
        "sdk.version": sdk.get("version"),
    }
    return {key: shown for key, value in found.items() if (shown := text(value))}


def _merge_tags(tags: dict[str, str], sentry_tags: dict[str, str]) -> dict[str, str]:
    """The user's own tags win; ours fill what room the schema's limit leaves."""
    merged = dict(tags)
    for key, value in sentry_tags.items():
        if key not in merged and len(merged) < MAX_TAGS:
            merged[key] = value
    return merged


def _frame(raw: JsonObject) -> dict[str, Any]:
    lineno = count(raw.get("lineno"))
    frame: dict[str, Any] = dict(
        make_frame(
            filename=text(first(raw, ("abs_path", "filename"))),
            function=text(first(raw, ("function", "raw_function", "symbol"))),
            lineno=lineno if lineno is not None and lineno <= MAX_LINENO else None,
            module=text(first(raw, ("module", "package"))),
            context_line=text(raw.get("context_line")),
            in_app=raw["in_app"] if isinstance(raw.get("in_app"), bool) else None,
        )
    )
    # Locals are the most useful thing Sentry sends and the riskiest: the ingest pipeline
    # scrubs them with the rest of the payload before anything is stored.
    variables = raw.get("vars")
    if isinstance(variables, dict) and variables:
        items = list(variables.items())[:MAX_VARS]
        frame["vars"] = {text(name, 200): as_repr(item) for name, item in items}
    return frame


def _frames(stacktrace: Any) -> list[dict[str, Any]]:
    """Frames caller to callee, as Sentry sends them; an overlong stack loses its middle."""
    frames = as_dict(stacktrace).get("frames")
    if not isinstance(frames, list):
        return []
    raw = [f for f in frames if isinstance(f, dict)]
    if len(raw) > MAX_FRAMES:
        raw = raw[: MAX_FRAMES // 2] + raw[-(MAX_FRAMES - MAX_FRAMES // 2) :]
    return [_frame(f) for f in raw]


def _relation(previous: JsonObject) -> str | None:
    """How an exception follows the one before it (oldest first).

    sentry-sdk only names the link (``mechanism.source``) for exception groups; a plain
    chain is walked through ``__cause__`` or ``__context__`` without saying which, so
    "cause" is the default. Members of an exception group are not linked to each other.
    """
    return _RELATIONS.get(text(as_dict(previous.get("mechanism")).get("source")))


def _threads(event: JsonObject) -> list[JsonObject]:
    threads = event.get("threads")
    values = threads.get("values") if isinstance(threads, dict) else threads
    return [t for t in values if isinstance(t, dict)] if isinstance(values, list) else []


def _crashed_thread_frames(event: JsonObject, thread_id: Any) -> list[dict[str, Any]]:
    """A native or mobile crash sends its stack with the thread, not with the exception."""
    threads = [t for t in _threads(event) if isinstance(t.get("stacktrace"), dict)]
    for wanted in (
        lambda t: thread_id is not None and t.get("id") == thread_id,
        lambda t: t.get("crashed") is True,
    ):
        for thread in threads:
            if wanted(thread):
                return _frames(thread["stacktrace"])
    return []


def _exceptions(event: JsonObject) -> list[SentryException]:
    """ParsedException-like dicts, oldest first, as Sentry orders ``exception.values``."""
    container = event.get("exception")
    values = container.get("values") if isinstance(container, dict) else container
    if not isinstance(values, list):
        return []
    values = [v for v in values if isinstance(v, dict)][-MAX_EXCEPTIONS:]
    platform = text(event.get("platform"))
    chain: list[SentryException] = []
    for index, exception in enumerate(values):
        name, module = exception_type(exception, platform)
        entry: SentryException = {
            "type": name,
            "message": text(exception.get("value"), MAX_MESSAGE),
            "frames": _frames(exception.get("stacktrace")),
            "relation": _relation(values[index - 1]) if index else None,
        }
        if module:
            entry["module"] = module
        chain.append(entry)
    if chain and not chain[-1]["frames"]:
        chain[-1]["frames"] = _crashed_thread_frames(event, values[-1].get("thread_id"))
    return chain


def _thread_stack(event: JsonObject) -> list[dict[str, Any]]:
    """A message event carries its stack (``attach_stacktrace``) outside any exception."""
    if isinstance(event.get("stacktrace"), dict):
        return _frames(event["stacktrace"])
    for thread in _threads(event):
        if isinstance(thread.get("stacktrace"), dict):
            return _frames(thread["stacktrace"])
    return []


def _message(event: JsonObject, chain: list[SentryException]) -> str:
    if chain and chain[-1]["message"]:
        return chain[-1]["message"]
    return event_message(event)[:MAX_MESSAGE]


def _log(crumb: JsonObject) -> dict[str, Any]:
    data = as_dict(crumb.get("data"))
    message = text(crumb.get("message"), MAX_MESSAGE)
    if not message and data:  # http and query breadcrumbs carry everything in data
        message = " ".join(f"{k}={as_repr(v, 200)}" for k, v in list(data.items())[:20])
    log: dict[str, Any] = {
        "level": (text(crumb.get("level")) or "info").upper(),
        "message": message,
    }
    ts = iso_time(crumb.get("timestamp"))
    if ts:
        log["ts"] = ts
    if text(crumb.get("category")):
        log["category"] = text(crumb.get("category"))
    if data:
        log["data"] = data
    return log


def _logs(breadcrumbs: Any) -> list[dict[str, Any]]:
    values = breadcrumbs.get("values") if isinstance(breadcrumbs, dict) else breadcrumbs
    if not isinstance(values, list):
        return []
    return [_log(c) for c in values[-MAX_LOGS:] if isinstance(c, dict)]


def event_id_of(value: Any) -> str:
    """The id as Sentry means it: a UUID as 32 lowercase hex digits; "" when unusable."""
    found = normalise_event_id(text(value, 100).strip())
    return found if _EVENT_ID.fullmatch(found) else ""


def _fingerprint(value: Any) -> list[str]:
    """The SDK's own grouping (``{{ default }}`` included); numbers are its text."""
    parts = value if isinstance(value, list) else []
    found = [text(part, MAX_SHORT) for part in parts if not isinstance(part, bool)]
    return [part for part in found if part.strip()][:MAX_FINGERPRINT]


def _by_template(event: JsonObject, chain: list[SentryException]) -> list[str]:
    """A log message without exception or stack groups by its template, as in Sentry."""
    if any(entry["type"] or entry["frames"] for entry in chain):
        return []
    template = event_template(event)
    return ["sentry-logentry", template[:MAX_SHORT]] if template else []


def event_to_incident(event: Any, envelope_event_id: Any = None) -> dict[str, Any]:
    """Translate one Sentry event into an incident payload; never raises.

    Always present: ``service``, ``message``, ``stacktrace``, ``logs``, ``tags``. The others
    (``event_id``, ``occurred_at``, ``environment``, ``error_type``, ``inference_context``,
    ``resource_impact``, ``fingerprint``) are left out when the event does not say, so
    schema defaults apply. ``envelope_event_id`` is the envelope header's id, which
    stands in when the event itself has none (an SDK's retry then finds the first one).
    """
    event = as_dict(event)
    tags = _tags(event.get("tags"))
    contexts = as_dict(event.get("contexts"))
    chain = _exceptions(event)
    thread_frames = [] if chain else _thread_stack(event)
    if thread_frames:
        chain = [{"type": "", "message": "", "frames": thread_frames, "relation": None}]
    incident: dict[str, Any] = {
        "service": (
            tags.get("service")
            or text(event.get("server_name"))
            or text(event.get("release"))
            or "unknown"
        )[:200],
        "message": _message(event, chain),
        "stacktrace": chain,
        "logs": _logs(event.get("breadcrumbs")),
        "tags": _merge_tags(tags, _sentry_tags(event)),
    }
    if chain and chain[0]["type"] == "" and not chain[0]["message"]:
        chain[0]["message"] = incident["message"]
    error_type = chain[-1]["type"] if chain else ""
    if not (error_type.strip() or incident["message"].strip()):
        incident["message"] = UNLABELED  # an issue needs a title, however little was sent
    optional = {
        "event_id": event_id_of(event.get("event_id")) or event_id_of(envelope_event_id),
        "occurred_at": iso_time(event.get("timestamp")),
        "environment": text(event.get("environment"), 100),
        "error_type": error_type,
        "inference_context": inference_context(contexts, tags),
        "resource_impact": resource_impact(contexts),
        "shape_diff": shape_diff(contexts),
        "fingerprint": _fingerprint(event.get("fingerprint")) or _by_template(event, chain),
    }
    incident.update({key: value for key, value in optional.items() if value})
    return incident
