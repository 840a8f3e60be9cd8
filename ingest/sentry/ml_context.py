"""What an ML service's Sentry event says about its model, run and hardware.

The JSON API takes these as ``inference_context`` and ``resource_impact``; a service on a
Sentry SDK says the same with ``set_context("inference", {...})``, a ``model`` context,
the SDK's own ``gpu`` context, or plain tags (``model``, ``model_version``, ``gpu``).
All of them land in the same fields, so the incident's ``model_id`` (and the issue's)
is the same whichever way the service reported. A structured context wins over a tag.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from ingest.sentry.values import JsonObject, as_dict, count, first, number, text

MAX_SHORT = 255

# field -> names accepted in ``contexts.inference`` (camelCase as the JSON API takes it)
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
# field -> names accepted in a ``model`` context
_MODEL_CONTEXT = {"model_id": ("id", "model_id", "name"), "model_version": ("version",)}
# field -> tag names, as services tag their events
_TAGS = {
    "model_id": ("model_id", "model.id", "model", "model.name", "model_name"),
    "model_version": ("model_version", "model.version"),
    "device": ("device", "gpu", "gpu.name"),
    "quantization": ("quantization",),
    "framework": ("framework",),
    "framework_version": ("framework_version",),
    "batch_size": ("batch_size",),
    "seq_len": ("seq_len",),
}
# field -> (accepted names, lowest, highest)
_RESOURCE = {
    "cpu_peak_percent": (("cpu_peak_percent", "cpuPeakPercent"), 0, 100_000),
    "memory_delta_mb": (("memory_delta_mb", "memoryDeltaMB", "memoryDeltaMb"), -math.inf, math.inf),
    "gpu_memory_used_mb": (("gpu_memory_used_mb", "gpuMemoryUsedMB"), 0, math.inf),
    "gpu_util_percent": (("gpu_util_percent", "gpuUtilPercent"), 0, 100),
}


_INFERENCE = {**_INFERENCE_TEXT, **_INFERENCE_INT}


class _Fields(NamedTuple):
    aliases: dict[str, tuple[str, ...]]  # field -> the names it is read from, in order
    names: frozenset[str]  # every one of those names


def _fields(aliases: dict[str, tuple[str, ...]]) -> _Fields:
    return _Fields(aliases, frozenset(name for names in aliases.values() for name in names))


_INFERENCE_FIELDS = _fields(_INFERENCE)
_MODEL_FIELDS = _fields(_MODEL_CONTEXT)
_TAG_FIELDS = _fields(_TAGS)


def _put(context: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` once, from the first source that has a usable value for it."""
    if value is None or key in context:  # most sources say nothing of most keys
        return
    if key in _INFERENCE_INT:
        if (found := count(value)) is not None:
            context[key] = found
    elif found_text := text(value, MAX_SHORT).strip():
        context[key] = found_text


def _read(context: dict[str, Any], source: JsonObject, fields: _Fields) -> None:
    """`_put` each field from `source`; a source with none of the names (most tags, most
    contexts) is passed over at once (issue 19: this was a quarter of the mapping's CPU)."""
    if source.keys().isdisjoint(fields.names):
        return
    for key, aliases in fields.aliases.items():
        _put(context, key, first(source, aliases))


def inference_context(contexts: JsonObject, tags: dict[str, str]) -> dict[str, Any]:
    """``inference_context`` from contexts (inference, model, gpu) and then tags."""
    context: dict[str, Any] = {}
    _read(context, as_dict(contexts.get("inference")), _INFERENCE_FIELDS)
    _read(context, as_dict(contexts.get("model")), _MODEL_FIELDS)
    _put(context, "device", as_dict(contexts.get("gpu")).get("name"))
    _read(context, tags, _TAG_FIELDS)
    return context


def resource_impact(contexts: JsonObject) -> dict[str, float]:
    raw = as_dict(contexts.get("resource"))
    impact: dict[str, float] = {}
    if not raw:
        return impact
    for key, (aliases, lowest, highest) in _RESOURCE.items():
        value = number(first(raw, aliases))
        if value is not None and lowest <= value <= highest:
            impact[key] = value
    return impact


def _dims(value: Any) -> list[int | None] | None:
    if not isinstance(value, list) or len(value) > 16:
        return None
    dims: list[int | None] = []
    for d in value:
        if d is None or (isinstance(d, int) and not isinstance(d, bool)):
            dims.append(d)
        else:
            return None
    return dims


def shape_diff(contexts: JsonObject) -> list[dict[str, Any]]:
    """``shape_diff`` from the ``rootcause`` context that rootcause_client's Sentry integration
    attaches. Items that do not fit the schema are dropped one by one, so one odd item
    never costs the event."""
    items = as_dict(contexts.get("rootcause")).get("shape_diff")
    out: list[dict[str, Any]] = []
    for item in items[:64] if isinstance(items, list) else []:
        item = as_dict(item)
        expected, actual = _dims(item.get("expected")), _dims(item.get("actual"))
        if expected is None or actual is None:
            continue
        out.append(
            {
                "tensor": text(item.get("tensor"), MAX_SHORT),
                "op": text(item.get("op"), MAX_SHORT),
                "expected": expected,
                "actual": actual,
            }
        )
    return out
