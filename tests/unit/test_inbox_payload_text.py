"""An inbox record's payload is encoded once (issue 19): its text is what encoding the
storable copy gave before, for any JSON-like payload, and the statement's document carries
it unchanged.

Payloads are untrusted request content, so Hypothesis chooses them: NUL, lone surrogates,
NaN and infinities (which jsonb refuses), text that merely looks like an escaped NUL.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from ingest.inbox.records import make_records, payload_text, storable_with_text
from ingest.inbox.write import document
from ingest.storable import storable

texts = st.text(max_size=12) | st.sampled_from(
    ["a\x00b", "\ud800", "x\udfffy", "\\u0000", "\\\\u0000", "é\x00", "\U0001f600"]
)
numbers = st.integers() | st.floats() | st.sampled_from([math.nan, math.inf, -math.inf, -0.0])
json_like = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=16,
)
payloads = st.dictionaries(texts, json_like, max_size=6)


def _before(payload: dict) -> object:
    """What the record held before: the storable copy, encoded."""
    return json.loads(json.dumps(storable(payload), ensure_ascii=False))


@given(payloads)
def test_payload_text_is_the_storable_copy_encoded(payload):
    text = payload_text(payload)
    text.encode("utf-8")  # no lone surrogate left
    assert json.loads(text) == _before(payload)


@given(payloads)
def test_payload_text_leaves_the_payload_as_it_was(payload):
    copy = json.dumps(payload, ensure_ascii=True, sort_keys=True, default=str)
    payload_text(payload)
    assert json.dumps(payload, ensure_ascii=True, sort_keys=True, default=str) == copy


def test_a_payload_with_nothing_to_replace_is_encoded_as_it_is():
    payload = {"service": "s", "message": "naïve \\u0000 text", "n": 1.5}
    assert json.loads(payload_text(payload)) == payload


def test_times_are_iso_text_and_text_passes_through():
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    sent = json.loads(payload_text({"occurred_at": when}))["occurred_at"]
    assert datetime.fromisoformat(sent.replace("Z", "+00:00")) == when  # as store reads it
    zoned = datetime(2026, 1, 2, 3, 4, 5, 123, tzinfo=timezone(timedelta(hours=2)))
    assert json.loads(payload_text({"t": zoned}))["t"] == zoned.isoformat()
    assert payload_text('{"a":1}') == '{"a":1}'


@given(st.lists(payloads, min_size=1, max_size=4))
def test_the_document_carries_each_record_and_its_payload(sent):
    records = make_records(7, "api", sent)
    spooled_before = [{**records[0], "payload": sent[0]}]  # a record of the old format
    rows = json.loads(document([*records, *spooled_before]))
    assert [r["payload"] for r in rows] == [*(_before(p) for p in sent), _before(sent[0])]
    for row, record in zip(rows, records, strict=False):
        assert {k: row[k] for k in ("project_id", "source", "event_id", "received_at")} == {
            k: record[k] for k in ("project_id", "source", "event_id", "received_at")
        }


@given(payloads)
def test_storable_with_text_is_the_storable_copy_and_its_text(payload):
    stored, text = storable_with_text(payload)
    assert json.loads(text) == json.loads(payload_text(payload))  # spelling may differ
    assert json.loads(text) == _before(payload)
    # the payload handed on is storable as it is: storing does not copy it again
    assert json.dumps(stored, sort_keys=True, default=str) == json.dumps(
        storable(payload), sort_keys=True, default=str
    )


def test_storable_with_text_copies_only_when_something_is_replaced():
    clean = {"service": "s", "tags": {"n": 1.5}}
    assert storable_with_text(clean)[0] is clean
    dirty = {"service": "s", "tags": {"loss": math.nan, "x\x00": "a\ud800"}}
    stored, _ = storable_with_text(dirty)
    assert stored is not dirty
    assert stored["tags"] == {"loss": "NaN", "x\ufffd": "a\ufffd"}


finite = st.integers() | st.floats(allow_nan=False, allow_infinity=False)
storable_like = st.recursive(
    st.none() | st.booleans() | finite | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=16,
)


@given(st.lists(st.dictionaries(st.text(max_size=8), storable_like, max_size=5), max_size=3))
def test_the_insert_document_reads_as_json_dumps_wrote_it(rows):
    """bulk_insert's document (pydantic-core's encoder) holds what json.dumps wrote; what
    it cannot encode (a lone surrogate) is written by json.dumps itself, as before."""
    from ingest.bulk_insert import _document

    expected = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(_document(rows)) == json.loads(expected)
    assert _document([{"m": "a\ud800"}]) == json.dumps(
        [{"m": "a\ud800"}], ensure_ascii=False, separators=(",", ":")
    )
