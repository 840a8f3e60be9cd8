"""Reading what sentry-sdk puts on the wire: key, compression, envelope framing."""

import contextlib
import gzip
import json
import sys
import zlib

import brotli
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sentry_sdk.envelope import Envelope, Item, PayloadRef
from sentry_sdk.utils import Dsn

from ingest.sentry.auth import build_dsn, public_key_from_request
from ingest.sentry.envelope import (
    MAX_HEADER_BYTES,
    MAX_ITEMS,
    EnvelopeError,
    EnvelopeTooLarge,
    decode_body,
    events_from_envelope,
    parse_envelope,
    read_envelope,
    read_header,
)

DSN = "http://abc123@127.0.0.1:9/42"


def sdk_envelope(*extra: Item, event: dict | None = None) -> bytes:
    """An envelope serialised by the SDK's own code, with an event and any extra items."""
    envelope = Envelope(headers={"event_id": "e" * 32, "sent_at": "2026-01-01T00:00:00Z"})
    for item in extra:
        envelope.add_item(item)
    envelope.add_event(event or {"event_id": "e" * 32, "message": "boom", "level": "error"})
    return envelope.serialize()


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


# --- the project key ------------------------------------------------------------------


def test_key_is_read_from_the_auth_header_the_sdk_sends():
    header = Dsn(DSN).to_auth(client="sentry.python/2.0.0").to_header()
    assert public_key_from_request({"X-Sentry-Auth": header}, {}, None) == "abc123"
    assert public_key_from_request({"x-sentry-auth": header}, {}, None) == "abc123"


def test_key_is_read_from_the_query_string_and_the_envelope_dsn():
    assert public_key_from_request({}, {"sentry_key": "k1"}, None) == "k1"
    assert public_key_from_request({}, {}, {"dsn": "https://k2@rc.example:8000/7"}) == "k2"
    assert public_key_from_request({}, {}, {"dsn": "https://k3:secret@rc.example/7"}) == "k3"


def test_header_wins_over_query_and_envelope():
    headers = {"X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=fromheader"}
    got = public_key_from_request(headers, {"sentry_key": "q"}, {"dsn": "http://d@h/1"})
    assert got == "fromheader"


@pytest.mark.parametrize(
    ("headers", "query", "envelope_header"),
    [
        ({}, {}, None),
        ({"X-Sentry-Auth": "Bearer abc"}, {}, {}),
        ({"X-Sentry-Auth": "Sentry sentry_version=7"}, {"sentry_key": ""}, {"dsn": 5}),
        ({"X-Sentry-Auth": "Sentry sentry_key=a b"}, {"sentry_key": "x;y"}, {"dsn": "::"}),
        ({}, {}, {"dsn": "http://[::1/42"}),
    ],
)
def test_missing_or_malformed_keys_give_none(headers, query, envelope_header):
    assert public_key_from_request(headers, query, envelope_header) is None


def test_built_dsn_is_understood_by_the_sdk():
    dsn = Dsn(build_dsn("abc123", "rc.example:8000/", 42, scheme="https"))
    assert (dsn.public_key, dsn.project_id) == ("abc123", "42")
    assert dsn.to_auth().get_api_url() == "https://rc.example:8000/api/42/envelope/"


# --- compression ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        (None, lambda b: b),
        ("identity", lambda b: b),
        ("gzip", gzip.compress),
        ("GZIP", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", raw_deflate),
        ("br", brotli.compress),
        ("gzip, br", lambda b: brotli.compress(gzip.compress(b))),
    ],
)
def test_compressed_bodies_decode_to_the_same_events(encoding, compress):
    body = sdk_envelope()
    assert decode_body(compress(body), encoding) == body
    assert events_from_envelope(decode_body(compress(body), encoding))[0]["message"] == "boom"


def test_concatenated_gzip_members_are_joined():
    assert decode_body(gzip.compress(b"ab") + gzip.compress(b"cd"), "gzip") == b"abcd"


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [("gzip", gzip.compress), ("deflate", zlib.compress), ("br", brotli.compress)],
)
def test_zip_bombs_are_refused_without_inflating_them(encoding, compress):
    bomb = compress(b"\0" * (16 * 1024 * 1024))
    with pytest.raises(EnvelopeTooLarge, match="larger than 1048576 bytes"):
        decode_body(bomb, encoding, max_bytes=1024 * 1024)


def test_a_body_exactly_at_the_cap_is_accepted():
    assert decode_body(gzip.compress(b"x" * 1000), "gzip", max_bytes=1000) == b"x" * 1000


def test_an_oversized_plain_body_is_refused():
    with pytest.raises(EnvelopeTooLarge, match="larger than 10 bytes"):
        decode_body(b"x" * 11, None, max_bytes=10)


@pytest.mark.parametrize(
    ("body", "encoding", "why"),
    [
        (gzip.compress(b"hello world", mtime=0)[:-6], "gzip", "truncated"),
        (b"not gzip at all", "gzip", "not valid gzip"),
        (b"not deflate at all", "deflate", "deflate"),
        (brotli.compress(b"hello world" * 50)[:-3], "br", "br"),
        (b"\xff\xff\xff not brotli", "br", "br"),
        (b"{}", "compress", "unsupported Content-Encoding 'compress'"),
    ],
)
def test_broken_compressed_bodies_say_what_is_wrong(body, encoding, why):
    with pytest.raises(EnvelopeError, match=why):
        decode_body(body, encoding)


def test_br_without_the_brotli_package_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "brotli", None)  # makes `import brotli` fail
    with pytest.raises(EnvelopeError, match="brotli package is not installed"):
        decode_body(brotli.compress(b"x"), "br")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.binary(max_size=512),
    st.sampled_from([None, "gzip", "deflate", "br", "identity", "x", "gzip,br"]),
)
def test_any_body_and_encoding_give_bytes_or_envelope_error(body, encoding):
    with contextlib.suppress(EnvelopeError):
        assert isinstance(decode_body(body, encoding, max_bytes=4096), bytes)


# --- envelope framing -----------------------------------------------------------------


def test_only_events_come_out_of_a_mixed_envelope():
    body = sdk_envelope(
        Item(payload=PayloadRef(json={"sid": "s", "status": "ok"}), type="session"),
        Item(payload=PayloadRef(json={"discarded_events": []}), type="client_report"),
        Item(payload=PayloadRef(json={"type": "transaction", "spans": []}), type="transaction"),
        Item(payload=b"line one\nline two\n", type="attachment", filename="log.txt"),
        Item(payload=PayloadRef(json={"future": True}), type="some_future_type"),
    )
    header, items = parse_envelope(body)
    assert header["event_id"] == "e" * 32
    assert [h["type"] for h, _ in items] == [
        "session",
        "client_report",
        "transaction",
        "attachment",
        "some_future_type",
        "event",
    ]
    assert items[3][1] == b"line one\nline two\n"
    assert events_from_envelope(body) == [
        {"event_id": "e" * 32, "message": "boom", "level": "error"}
    ]


def test_length_delimited_payloads_may_contain_newlines():
    event = json.dumps({"message": "multi\nline", "level": "error"}, indent=2).encode()
    body = (
        b'{"event_id":"abc"}\n'
        + json.dumps({"type": "event", "length": len(event)}).encode()
        + b"\n"
        + event
        + b"\n"
    )
    assert b"\n" in event
    assert events_from_envelope(body) == [{"message": "multi\nline", "level": "error"}]


@pytest.mark.parametrize("ending", [b"", b"\n", b"\n\n"])
def test_items_without_length_run_to_the_next_newline(ending):
    body = (
        b"{}\n"
        b'{"type":"attachment"}\nplain text\n'
        b'{"type":"event"}\n{"message":"a"}\n'
        b'{"type":"event","length":15}\n{"message":"b"}' + ending
    )
    assert events_from_envelope(body) == [{"message": "a"}, {"message": "b"}]


def test_an_envelope_with_no_items_has_no_events():
    assert events_from_envelope(b'{"event_id":"x"}') == []
    assert events_from_envelope(b'{"event_id":"x"}\n') == []


def test_empty_payload_without_length_is_an_empty_item():
    _, items = parse_envelope(b'{}\n{"type":"attachment","length":0}\n\n{"type":"x"}\n')
    assert items == [({"type": "attachment", "length": 0}, b""), ({"type": "x"}, b"")]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"", "no header line"),
        (b"\n", "no header line"),
        (b"not json\n", "envelope header is not valid JSON"),
        (b"[1, 2]\n", "header must be a JSON object"),
        (b"\xff\xfe\x00garbage\n", "not valid JSON"),
        (b'{}\n{"type": "event"\n{}', "item 0 header is not valid JSON"),
        (b"{}\n42\n{}", "item 0 header must be a JSON object"),
        (b'{}\n{"type":"event","length":100}\n{"message":"short"}', "truncated"),
        (b'{}\n{"type":"event","length":-1}\n{}', "invalid length"),
        (b'{}\n{"type":"event","length":"2"}\n{}', "invalid length"),
        (b'{}\n{"type":"event","length":true}\n{}', "invalid length"),
        (b'{}\n{"type":"event","length":2}\n{}}\n', "longer than its declared length"),
        (b'{}\n{"type":"event"}\n{"message": \n', "item 0 \\(event\\) payload is not valid JSON"),
        (b'{}\n{"type":"event"}\n["a list"]\n', "payload must be a JSON object"),
        (b"{}\n" + b"[" * 100_000 + b"\n", "header line is longer than"),
        (b"{}\n" + b"[" * 1000 + b"\n", "nested more than 32 levels"),
    ],
)
def test_truncated_or_garbage_envelopes_say_what_is_wrong(body, why):
    with pytest.raises(EnvelopeError, match=why):
        events_from_envelope(body)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=2048))
def test_arbitrary_bytes_only_ever_raise_envelope_error(body):
    try:
        events = events_from_envelope(body)
    except EnvelopeError:
        return
    assert all(isinstance(event, dict) for event in events)


_scalars = st.none() | st.booleans() | st.integers(-5, 80) | st.floats() | st.text(max_size=8)
_item_headers = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["event", "attachment", "session"]) | _scalars,
        "length": st.integers(-1, 80) | _scalars,
        "filename": _scalars | st.lists(_scalars, max_size=3),
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_item_headers, st.binary(max_size=64)), max_size=5))
def test_envelopes_with_arbitrary_item_headers_only_raise_envelope_error(items):
    body = b"{}\n" + b"".join(
        json.dumps(header).encode() + b"\n" + payload + b"\n" for header, payload in items
    )
    with contextlib.suppress(EnvelopeError):
        events_from_envelope(body)


# --- item limits, header limits, depth --------------------------------------------------


def test_an_item_over_its_limit_is_dropped_and_counted_the_event_beside_it_kept():
    event = b'{"message": "boom"}'
    body = (
        b'{"event_id": "9ec79c33ec9942ab8353589fcb2e04dc"}\n'
        + b'{"type": "attachment", "length": 2000}\n'
        + b"\0" * 2000
        + b'\n{"type": "event"}\n'
        + event
        + b"\n{}\n"
        + b"x" * 1500  # an item without a length, over the limit too
        + b"\n"
    )
    envelope = read_envelope(body, max_item_bytes=1000)
    assert [(item.header.get("type"), item.position) for item in envelope.items] == [("event", 1)]
    assert envelope.items[0].payload == event
    assert envelope.dropped == [
        {"item": 0, "type": "attachment", "msg": "item is 2000 bytes; the limit is 1000"},
        {"item": 2, "type": "None", "msg": "item is 1500 bytes; the limit is 1000"},
    ]


def test_an_item_exactly_at_its_limit_is_kept():
    body = b'{}\n{"type": "attachment", "length": 1000}\n' + b"a" * 1000 + b"\n"
    assert read_envelope(body, max_item_bytes=1000).dropped == []


def test_header_lines_are_small_or_refused_before_any_parsing():
    with pytest.raises(EnvelopeError, match="header line is longer than") as caught:
        read_header(b"[" * (MAX_HEADER_BYTES + 1))
    assert caught.value.loc == ["body", "header"]
    item_header = b'{"type": "event", "pad": "' + b"p" * MAX_HEADER_BYTES + b'"}'
    with pytest.raises(EnvelopeError, match="item 0 header line is longer") as caught:
        read_envelope(b"{}\n" + item_header + b"\n{}\n")
    assert caught.value.loc == ["body", "items", 0, "header"]
    assert read_header(b'{"dsn": "x"}\n' + b"z" * (MAX_HEADER_BYTES * 2)) == {"dsn": "x"}


def test_a_deep_event_item_is_refused_with_the_path_inside_the_envelope():
    deep = b'{"contexts": {"gpu": ' + b"[" * 40 + b"]" * 40 + b"}}"
    body = b'{}\n{"type": "session"}\n{}\n{"type": "event"}\n' + deep + b"\n"
    with pytest.raises(EnvelopeError, match="nested more than 32") as caught:
        events_from_envelope(body)
    assert caught.value.loc[:6] == ["body", "items", 1, "contexts", "gpu", 0]
    assert len(caught.value.loc) == 3 + 32


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [("zstd", lambda b: zstandard.ZstdCompressor().compress(b)), ("gzip, zstd", None)],
)
def test_zstd_bodies_decode_to_the_same_events(encoding, compress):
    body = sdk_envelope()
    if compress is None:
        compress = lambda b: zstandard.ZstdCompressor().compress(gzip.compress(b))  # noqa: E731
    assert events_from_envelope(decode_body(compress(body), encoding))[0]["message"] == "boom"


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        (b"{}\n42\n{}", ["body", "items", 0, "header"]),
        (b'{}\n{"type":"event"}\n{}\n{"type":"event","length":-1}\n{}',
         ["body", "items", 1, "header", "length"]),
        (b'{}\n{"type":"event","length":100}\n{"message":"short"}', ["body", "items", 0]),
        (b'{}\n{"type":"event","length":2}\n{}}\n', ["body", "items", 0]),
        (b'{}\n{"type":"event"}\n["a list"]\n', ["body", "items", 0]),
    ],
)  # fmt: skip
def test_an_item_refused_for_its_framing_is_named_by_its_path(body, loc):
    """These said which item in the message only; the answer's loc was ["body"]."""
    with pytest.raises(EnvelopeError) as refused:
        events_from_envelope(body)
    assert refused.value.loc == loc


def test_an_envelope_of_more_items_than_any_sdk_sends_is_refused_at_the_first_one_over():
    """20 MiB of empty session items cost ~0.9 s of header parsing for one token."""
    session = b'{"type": "session"}\n{}\n'
    event = b'{"type": "event"}\n{"message": "boom"}\n'
    at_limit = b"{}\n" + session * (MAX_ITEMS - 1) + event
    assert events_from_envelope(at_limit) == [{"message": "boom"}]
    with pytest.raises(EnvelopeError, match=f"at most {MAX_ITEMS} items") as caught:
        read_envelope(at_limit + session)
    assert caught.value.loc == ["body", "items", MAX_ITEMS]
