"""Mapping a Sentry event, as sentry-sdk 2.x sends it, onto Rootcause's incident schema.

Services that already report to Sentry can point their DSN at us unchanged, so this is
their whole integration: anything the SDK sends that we understand becomes an incident
field, and anything odd is skipped rather than refused — the endpoint is public and one
malformed field must not cost the user the rest of the report.
The result is the same dict a client would POST to ``/api/v1/incidents``: it still goes
through validation and secret scrubbing (frame ``vars`` especially) afterwards.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any

from ingest.parsing.frames import MAX_FIELD, MAX_FRAMES, make_frame

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
_EVENT_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")

_INFERENCE_TEXT = {
    "model_id": ("model_id", "modelId"),
    "model_version": ("model_version", "modelVersion"),
    "input_hash": ("input_hash", "inputHash"),
    "quantization": ("quantization",),
    "device": ("device",),
    "framework": ("framework",),
    "framework_version": ("framework_version", "frameworkVersion"),
}
_INFERENCE_INT = {"batch_size": ("batch_size", "batchSize"), "seq_len": ("seq_len", "seqLen")}
# key -> (accepted names, lowest, highest)
_RESOURCE = {
    "cpu_peak_percent": (("cpu_peak_percent", "cpuPeakPercent"), 0, 100_000),
    "memory_delta_mb": (("memory_delta_mb", "memoryDeltaMB", "memoryDeltaMb"), -math.inf, math.inf),
    "gpu_memory_used_mb": (("gpu_memory_used_mb", "gpuMemoryUsedMB"), 0, math.inf),
    "gpu_util_percent": (("gpu_util_percent", "gpuUtilPercent"), 0, 100),
}
# Python's traceback prints these exception types without their module; so do we, so
# that an incident sent through Sentry and one sent as traceback text group together.
_UNQUALIFIED_MODULES = {"builtins", "__builtin__", "__builtins__", "__main__", "exceptions"}
_RELATIONS = {"__cause__": "cause", "__context__": "context", "": "cause"}


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _text(value: Any, limit: int = MAX_FIELD) -> str:
    """A scalar as text; containers become "" so a stray object never lands in a str field."""
    if value is None or isinstance(value, (dict, list, tuple, set)):
        return ""
    try:
        return str(value)[:limit]
    except ValueError:  # an int past Python's digit limit
        return ""


def _repr(value: Any, limit: int = MAX_FIELD) -> str:
    """Any JSON value as text: Sentry serialises containers in ``vars`` as JSON structures."""
    if isinstance(value, str):
        return value[:limit]
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:limit]
    except (TypeError, ValueError, RecursionError):
        return _text(value, limit)


def _first(mapping: dict, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if mapping.get(key) is not None:
            return mapping[key]
    return None


def _int(value: Any) -> int | None:
    """A non-negative count (line number, batch size); anything else is unknown."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and len(value) < 20:
        try:
            number = int(value.strip())
        except ValueError:
            return None
    return number if number is not None and number >= 0 else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _iso(value: Any) -> str | None:
    """Sentry timestamps are epoch seconds (float) or RFC 3339 strings; we store UTC ISO."""
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            moment = datetime.fromtimestamp(value, tz=UTC)
        elif isinstance(value, str) and value.strip():
            moment = datetime.fromisoformat(value.strip())
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
        else:
            return None
        return moment.astimezone(UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        return None


def _tags(value: Any) -> dict[str, str]:
    """Tags arrive as ``{"k": "v"}`` or ``[["k", "v"], ...]``; we keep a flat str->str."""
    if isinstance(value, dict):
        pairs: list | tuple = list(value.items())
    elif isinstance(value, (list, tuple)):
        pairs = value
    else:
        return {}
    tags: dict[str, str] = {}
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            continue
        key, item = _text(pair[0], MAX_TAG_KEY), _text(pair[1])
        if key and pair[1] is not None and len(tags) < MAX_TAGS:
            tags[key] = item
    return tags


def _sentry_tags(event: dict) -> dict[str, str]:
    """Where the event came from, as tags: the schema has no columns for these."""
    sdk = _dict(event.get("sdk"))
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
    return {key: _text(value) for key, value in found.items() if _text(value)}


def _merge_tags(tags: dict[str, str], sentry_tags: dict[str, str]) -> dict[str, str]:
    """The user's own tags win; ours fill what room the schema's limit leaves."""
    merged = dict(tags)
    for key, value in sentry_tags.items():
        if key not in merged and len(merged) < MAX_TAGS:
            merged[key] = value
    return merged


def _frame(raw: dict) -> dict[str, Any]:
    lineno = _int(raw.get("lineno"))
    frame: dict[str, Any] = dict(
        make_frame(
            filename=_text(_first(raw, ("abs_path", "filename"))),
            function=_text(raw.get("function")),
            lineno=lineno if lineno is not None and lineno <= MAX_LINENO else None,
            module=_text(raw.get("module")),
            context_line=_text(raw.get("context_line")),
            in_app=raw["in_app"] if isinstance(raw.get("in_app"), bool) else None,
        )
    )
    # Locals are the most useful thing Sentry sends and the riskiest: the ingest pipeline
    # scrubs them with the rest of the payload before anything is stored.
    variables = raw.get("vars")
    if isinstance(variables, dict) and variables:
        items = list(variables.items())[:MAX_VARS]
        frame["vars"] = {_text(name, 200): _repr(item) for name, item in items}
    return frame


def _frames(stacktrace: Any) -> list[dict[str, Any]]:
    """Frames caller to callee, as Sentry sends them; an overlong stack loses its middle."""
    frames = _dict(stacktrace).get("frames")
    if not isinstance(frames, list):
        return []
    raw = [f for f in frames if isinstance(f, dict)]
    if len(raw) > MAX_FRAMES:
        raw = raw[: MAX_FRAMES // 2] + raw[-(MAX_FRAMES - MAX_FRAMES // 2) :]
    return [_frame(f) for f in raw]


def _error_type(exception: dict) -> str:
    name = _text(exception.get("type"))
    module = _text(exception.get("module"))
    if name and module and module not in _UNQUALIFIED_MODULES and not name.startswith(module + "."):
        name = f"{module}.{name}"
    return name[:MAX_SHORT]


def _relation(previous: dict) -> str | None:
    """How an exception follows the one before it (oldest first).

    sentry-sdk only names the link (``mechanism.source``) for exception groups; a plain
    chain is walked through ``__cause__`` or ``__context__`` without saying which, so
    "cause" is the default. Members of an exception group are not linked to each other.
    """
    return _RELATIONS.get(_text(_dict(previous.get("mechanism")).get("source")))


def _exceptions(event: dict) -> list[dict[str, Any]]:
    """ParsedException-like dicts, oldest first, as Sentry orders ``exception.values``."""
    container = event.get("exception")
    values = container.get("values") if isinstance(container, dict) else container
    if not isinstance(values, list):
        return []
    values = [v for v in values if isinstance(v, dict)][-MAX_EXCEPTIONS:]
    chain = []
    for index, exception in enumerate(values):
        chain.append(
            {
                "type": _error_type(exception),
                "message": _text(exception.get("value"), MAX_MESSAGE),
                "frames": _frames(exception.get("stacktrace")),
                "relation": _relation(values[index - 1]) if index else None,
            }
        )
    return chain


def _thread_stack(event: dict) -> list[dict[str, Any]]:
    """A message event carries its stack (``attach_stacktrace``) outside any exception."""
    if isinstance(event.get("stacktrace"), dict):
        return _frames(event["stacktrace"])
    threads = event.get("threads")
    values = threads.get("values") if isinstance(threads, dict) else threads
    for thread in values if isinstance(values, list) else []:
        if isinstance(thread, dict) and isinstance(thread.get("stacktrace"), dict):
            return _frames(thread["stacktrace"])
    return []


def _message(event: dict, chain: list[dict[str, Any]]) -> str:
    if chain and chain[-1]["message"]:
        return chain[-1]["message"]
    logentry = _dict(event.get("logentry"))
    message = event.get("message")
    for candidate in (
        logentry.get("formatted"),
        logentry.get("message"),
        _dict(message).get("formatted"),
        _dict(message).get("message"),
        message,
    ):
        if _text(candidate):
            return _text(candidate, MAX_MESSAGE)
    return ""


def _log(crumb: dict) -> dict[str, Any]:
    data = _dict(crumb.get("data"))
    message = _text(crumb.get("message"), MAX_MESSAGE)
    if not message and data:  # http and query breadcrumbs carry everything in data
        message = " ".join(f"{k}={_repr(v, 200)}" for k, v in list(data.items())[:20])
    log: dict[str, Any] = {
        "level": (_text(crumb.get("level")) or "info").upper(),
        "message": message,
    }
    ts = _iso(crumb.get("timestamp"))
    if ts:
        log["ts"] = ts
    if _text(crumb.get("category")):
        log["category"] = _text(crumb.get("category"))
    if data:
        log["data"] = data
    return log


def _logs(breadcrumbs: Any) -> list[dict[str, Any]]:
    values = breadcrumbs.get("values") if isinstance(breadcrumbs, dict) else breadcrumbs
    if not isinstance(values, list):
        return []
    return [_log(c) for c in values[-MAX_LOGS:] if isinstance(c, dict)]


def _inference_context(contexts: dict) -> dict[str, Any]:
    raw = _dict(contexts.get("inference"))
    context: dict[str, Any] = {}
    for key, aliases in _INFERENCE_TEXT.items():
        if _text(_first(raw, aliases)):
            context[key] = _text(_first(raw, aliases), MAX_SHORT)
    for key, aliases in _INFERENCE_INT.items():
        if _int(_first(raw, aliases)) is not None:
            context[key] = _int(_first(raw, aliases))
    gpu_name = _text(_dict(contexts.get("gpu")).get("name"), MAX_SHORT)
    if gpu_name and "device" not in context:
        context["device"] = gpu_name
    return context


def _resource_impact(contexts: dict) -> dict[str, float]:
    raw = _dict(contexts.get("resource"))
    impact = {}
    for key, (aliases, lowest, highest) in _RESOURCE.items():
        value = _number(_first(raw, aliases))
        if value is not None and lowest <= value <= highest:
            impact[key] = value
    return impact


def _event_id(value: Any) -> str:
    text = _text(value).strip()
    return text if _EVENT_ID.fullmatch(text) else ""


def event_to_incident(event: dict) -> dict:
    """Translate one Sentry event into an incident payload; never raises.

    Always present: ``service``, ``message``, ``stacktrace``, ``logs``, ``tags``. The others
    (``event_id``, ``occurred_at``, ``environment``, ``error_type``, ``inference_context``,
    ``resource_impact``) are left out when the event does not say, so schema defaults apply.
    """
    event = _dict(event)
    tags = _tags(event.get("tags"))
    contexts = _dict(event.get("contexts"))
    chain = _exceptions(event)
    thread_frames = [] if chain else _thread_stack(event)
    if thread_frames:
        chain = [{"type": "", "message": "", "frames": thread_frames, "relation": None}]
    incident: dict[str, Any] = {
        "service": (
            tags.get("service")
            or _text(event.get("server_name"))
            or _text(event.get("release"))
            or "unknown"
        )[:200],
        "message": _message(event, chain),
        "stacktrace": chain,
        "logs": _logs(event.get("breadcrumbs")),
        "tags": _merge_tags(tags, _sentry_tags(event)),
    }
    if chain and chain[0]["type"] == "" and not chain[0]["message"]:
        chain[0]["message"] = incident["message"]
    optional = {
        "event_id": _event_id(event.get("event_id")),
        "occurred_at": _iso(event.get("timestamp")),
        "environment": _text(event.get("environment"), 100),
        "error_type": chain[-1]["type"] if chain else "",
        "inference_context": _inference_context(contexts),
        "resource_impact": _resource_impact(contexts),
    }
    incident.update({key: value for key, value in optional.items() if value})
    return incident
