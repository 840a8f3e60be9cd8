"""`scrub_parsed` (the inbox processor's scrub, given each payload's JSON text) returns what
`scrub` returns: the payload itself when the text shows nothing to scrub, else the scrub."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.scrubbing import MAX_DEPTH, scrub, scrub_parsed
from ingest.scrubbing.patterns import PREFILTER, TEXT_RULES
from ingest.storable import storable

# Trigger words, secret names (those without a trigger too), escapes the check must see
# through, characters RE2 folds from outside ASCII, and ordinary incident text.
_WORDS = st.sampled_from(
    [
        "pass_phrase",
        "pass-phrase",
        "PassPhrase",
        "passphrase",
        "pwd",
        "PWD",
        "password",
        "db_password",
        "api_key",
        "apikey",
        "primary_key",
        "token",
        "pad_token",
        "access_token",
        "secret",
        "Authorization",
        "cookie",
        "Cookies",
        "TO\u212aEN",
        "\u017fk-",
        "sk-abcdefghijklmnopqrstuv",
        "Bearer abcdefgh12345678",
        "http://u:p@h/x",
        "https:\\/\\/u:p@h",
        "://",
        "/",
        "@",
        "a@b.io",
        "sig=abc",
        ";Pwd=x;",
        "hooks.slack.com",
        "-----BEGIN PRIVATE KEY-----",
        "private key",
        "x=1",
        "Key",
        "KEY",
        "\\u0040",
        '"',
        "\\",
        "\n",
        "\t",
        "\x00",
        "\ud800",
        "é",
        "RuntimeError",
        "mat1 and mat2",
        "42",
        " ",
    ]
)
_TEXT = st.lists(_WORDS | st.text(max_size=5), max_size=6).map("".join)
_KEYS = _TEXT | st.sampled_from(["message", "type", "filename", "module", "function", "tags"])
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=4),
    max_leaves=25,
)


def _nested(depth: int) -> dict[str, object]:
    value: dict[str, object] = {"message": "deep"}
    for _ in range(depth):
        value = {"a": [value]}
    return value


def _texts(value: object) -> list[str]:
    """The JSON documents a value may arrive as: PostgreSQL's spacing, compact, escaped
    (``\\u`` for what is not ASCII, ``\\/`` for every slash)."""
    text = json.dumps(value, ensure_ascii=False)
    assert json.loads(text.replace("/", "\\/")) == json.loads(text)
    return [
        text,
        json.dumps(value, ensure_ascii=False, separators=(",", ":")),
        json.dumps(value),
        text.replace("/", "\\/"),
    ]


@settings(max_examples=800, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=6))
def test_scrubbing_a_parsed_payload_gives_what_scrubbing_gives(payload):
    payload = storable(payload)
    for text in _texts(payload):
        assert scrub_parsed(payload, text) == scrub(payload)


def test_a_payload_nested_to_the_limit_is_cut_there_as_scrub_cuts_it():
    for depth in (MAX_DEPTH // 2 - 1, MAX_DEPTH // 2, MAX_DEPTH // 2 + 1, MAX_DEPTH):
        payload = _nested(depth)  # two containers per level
        for text in _texts(payload):
            assert scrub_parsed(payload, text) == scrub(payload)


def test_an_ordinary_incident_is_returned_as_it_is_and_a_secret_is_still_scrubbed():
    incident = {"message": "mat1 and mat2 shapes cannot be multiplied", "logs": ["step=3"]}
    assert scrub_parsed(incident, json.dumps(incident)) is incident
    leaked = {"tags": {"pass_phrase": "correct horse battery"}}
    assert scrub_parsed(leaked, json.dumps(leaked)) == scrub(leaked) != leaked


def test_no_trigger_holds_a_character_json_escapes():
    triggers = {t for rule in TEXT_RULES for t in rule.triggers}
    assert all(t.isascii() and t.isprintable() and '"' not in t and "\\" not in t for t in triggers)
    assert all(PREFILTER.search(t) for t in triggers)


def _sentry_event(**extra: object) -> dict[str, object]:
    """A mapped Sentry event as the processor stores it: its release is `name@version` and
    its context has a `framework_version` key, so its text holds triggers (`@`, `rk_`)."""
    return {
        "message": "mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        "inference_context": {"model_id": "ranker-v3", "framework_version": ""},
        "tags": {"release": "ranker@3.1.0", "sdk.name": "sentry.python"},
        **extra,
    }


def test_triggers_that_no_rule_matches_leave_a_sentry_event_as_it_is():
    event = _sentry_event()
    for text in _texts(event)[:3]:  # not the escaped slashes: those are screened string by string
        assert scrub_parsed(event, text) is event


@pytest.mark.parametrize(
    "extra",
    [
        {"logs": ["mail ops@example.com when it fails"]},
        {"logs": ["key rk_live_abcdefghijklmnop1234 leaked"]},
        # After an escaped newline the token starts a word in the string but not in the text
        # (`\nrk_...` reads `n` before it): the string by string screen still finds it.
        {"logs": ["line one\nrk_live_abcdefghijklmnop1234"]},
        {"tags": {"api_key": "abc123def456"}},
    ],
)
def test_a_sentry_event_with_a_secret_is_still_scrubbed(extra):
    event = _sentry_event(**extra)
    for text in _texts(event):
        scrubbed = scrub_parsed(event, text)
        assert scrubbed == scrub(event) != event
        assert "[redacted:" in json.dumps(scrubbed)


@settings(max_examples=500, deadline=None)
@given(_TEXT)
def test_the_triggers_a_document_holds_are_every_trigger_in_its_lowercased_text(text):
    from ingest.scrubbing import _TRIGGERS, _triggers_in

    text = text.encode("ascii", "replace").decode()  # the processor asks only of ASCII text
    assert _triggers_in(text) == tuple(t for t in _TRIGGERS if t in text.lower())


def test_a_trigger_set_that_reports_nothing_falls_back_to_a_test_per_trigger(monkeypatch):
    """The RE2 set reports nothing when its automaton could not run: a document with a
    secret is then screened as before, never passed as clean."""
    import ingest.scrubbing as scrubbing

    class Silent:
        def Match(self, text: str) -> None:  # noqa: N802 - re2.Set's name
            return None

    monkeypatch.setattr(scrubbing, "_TRIGGER_SET", Silent())
    event = _sentry_event(logs=["mail ops@example.com when it fails"])
    text = json.dumps(event)
    assert scrubbing._triggers_in(text) == ("@", "rk_")
    assert scrub_parsed(event, text) == scrub(event) != event


def test_a_document_holding_triggers_is_scanned_for_them_once(monkeypatch):
    """Issue 19: the trigger set's one pass decides; the prefilter's scan of the whole
    document ran before it too (~10 us an incident), and runs now only when the set
    reports nothing."""
    import ingest.scrubbing as scrubbing

    class NoScan:
        def search(self, text: str) -> None:
            raise AssertionError("the prefilter scanned the document again")

    event = _sentry_event(logs=["mail ops@example.com when it fails"])
    text = json.dumps(event, separators=(",", ":"))
    expected = scrub(event)
    monkeypatch.setattr(scrubbing, "PREFILTER", NoScan())
    assert scrub_parsed(event, text) == expected != event
