"""The Sentry mapping's readers made cheaper for issue 19 (`values.text` and `values.first`,
`ml_context.inference_context` and `resource_impact`, `mapping._sentry_tags`) give what
they gave before, written here as they were, for any JSON an SDK may send."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.sentry import mapping, ml_context, values
from ingest.sentry.values import MAX_FIELD, as_dict, number
from tests.integration.test_ingest_fuzz import json_values


def text_before(value: Any, limit: int = MAX_FIELD) -> str:
    if value is None or isinstance(value, (dict, list, tuple, set)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    try:
        return str(value)[:limit]
    except ValueError:
        return ""


def first_before(mapping_: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if mapping_.get(key) is not None:
            return mapping_[key]
    return None


def inference_context_before(contexts: dict[str, Any], tags: dict[str, str]) -> dict[str, Any]:
    put = ml_context._put
    context: dict[str, Any] = {}
    inference = as_dict(contexts.get("inference"))
    for key, aliases in ml_context._INFERENCE.items():
        put(context, key, first_before(inference, aliases))
    model = as_dict(contexts.get("model"))
    for key, aliases in ml_context._MODEL_CONTEXT.items():
        put(context, key, first_before(model, aliases))
    put(context, "device", as_dict(contexts.get("gpu")).get("name"))
    for key, names in ml_context._TAGS.items():
        put(context, key, first_before(tags, names))
    return context


def resource_impact_before(contexts: dict[str, Any]) -> dict[str, float]:
    raw = as_dict(contexts.get("resource"))
    impact = {}
    for key, (aliases, lowest, highest) in ml_context._RESOURCE.items():
        value = number(first_before(raw, aliases))
        if value is not None and lowest <= value <= highest:
            impact[key] = value
    return impact


def _names(table: dict[str, Any]) -> list[str]:
    return [n for v in table.values() for n in (v[0] if isinstance(v[0], tuple) else v)]


NAMES = sorted(
    set(_names(ml_context._INFERENCE))
    | set(_names(ml_context._MODEL_CONTEXT))
    | set(_names(ml_context._TAGS))
    | set(_names(ml_context._RESOURCE))
    | {"name", "other", "service"}
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.sampled_from([" 12 ", "4x256", "", " ", "1e3", "NaN", "\udc80", 10**5000])
)
sources = st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=5), scalars | json_values)
contexts = st.dictionaries(
    st.sampled_from(["inference", "model", "gpu", "resource", "runtime"]), sources | json_values
)
tags = st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=5), st.text(max_size=10))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


@given(value=scalars | json_values, limit=st.integers(0, 300))
def test_text_reads_what_it_read(value, limit):
    assert _same(values.text(value, limit), text_before(value, limit))


@given(source=sources, keys=st.lists(st.sampled_from(NAMES), max_size=4).map(tuple))
def test_first_finds_what_it_found(source, keys):
    assert _same(values.first(source, keys), first_before(source, keys))


@settings(max_examples=300)
@given(contexts=contexts, tags=tags)
def test_ml_context_reads_what_it_read(contexts, tags):
    assert ml_context.inference_context(contexts, tags) == inference_context_before(contexts, tags)
    assert ml_context.resource_impact(contexts) == resource_impact_before(contexts)


@given(event=st.dictionaries(st.sampled_from(["release", "platform", "level", "logger",
                                              "server_name", "transaction", "sdk"]),
                             scalars | json_values | sources))  # fmt: skip
def test_sentry_tags_are_what_they_were(event):
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
    before = {key: text_before(value) for key, value in found.items() if text_before(value)}
    assert mapping._sentry_tags(event) == before
