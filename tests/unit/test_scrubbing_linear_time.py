"""Scrubbing stays linear and stable on hostile text: every pattern is RE2-linear, the
fast substitution agrees with RE2's own, and a flood of findings is cut."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ingest.linear_regex import is_linear
from ingest.scrubbing import MAX_MATCHES, scrub, scrub_with_count, substitute
from ingest.scrubbing.patterns import NAME_RULES, PREFILTER, TEXT_RULES
from tests.support.secret_samples import (
    OPENAI_KEY,
    SECRETS,
    SLACK_TOKEN,
    json_values,
)


def test_every_scrubbing_pattern_is_linear_time():
    assert is_linear(PREFILTER)
    for rule in (*TEXT_RULES, *NAME_RULES):
        assert is_linear(rule.pattern), rule.name


@pytest.mark.parametrize(
    "hostile",
    [
        "a=" * 32_768,
        "xoxb" + "-" * 65_536,
        "a" * 65_536 + "@",
        "://" + "a:" * 32_768,
        '"token": ' * 8_000,
        'secret="' + "\\a" * 32_768,
        "-----BEGIN RSA PRIVATE KEY-----" + "x" * 65_536,
    ],
    ids=["a=a=", "xoxb---", "aaa@", "://a:a:", "token:token:", "unclosed quote", "no END"],
)
def test_hostile_text_is_scrubbed_to_a_stable_result(hostile):
    once = scrub(hostile)
    assert scrub(once) == once


fragments = st.sampled_from(
    [
        OPENAI_KEY,
        SLACK_TOKEN,
        SECRETS["slack_rotated"],
        SECRETS["rootcause"],
        "hooks.slack.com/services/T0/B0/x",
        "password=",
        "DB_PASSWORD: ",
        '"api_key": "',
        "Bearer ",
        "Token ",
        "redis://:",
        "://u:",
        "@",
        "@x.io",
        ";Pwd=",
        "&sig=",
        "AccountKey=",
        "PublicKeyToken=",
        "[redacted:",
        "]",
        '\\"',
        "'",
        "=",
        ":",
        " ",
        "\n",
        "-----BEGIN PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "é",
        "€",
        "\U0001f600",
        "\ud83d",  # unpaired surrogates: JSON allows them
        "\udfff",
    ]
)
secretish_text = st.lists(fragments | st.text(max_size=12), max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(secretish_text)
# a URL's password inside a "password=" value: the value once ended at the marker's "]"
@example("redis://:password=redis://:0@")
def test_scrubbing_secret_like_text_never_raises_and_is_idempotent(text):
    once = scrub(text)
    assert scrub(once) == once


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_scrubbing_structured_values_is_idempotent(value):
    once = scrub(value)
    # Compared as JSON text: a NaN in the value is never == itself, but it serialises alike.
    assert json.dumps(scrub(once), sort_keys=True) == json.dumps(once, sort_keys=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(fragments | st.text(max_size=12), max_size=30).map("".join))
def test_the_fast_substitution_agrees_with_re2s_own(text):
    # substitute.sub reaches into the compiled RE2 object for speed; it must never differ.
    # (RE2's own sub reads an unpaired surrogate as "?"; ours keeps it: compare without.)
    text = text.encode("utf-8", "replace").decode("utf-8")
    for rule in TEXT_RULES:
        fast = substitute.sub(rule.pattern, rule.replace, text, substitute.Budget(10_000))
        assert fast == rule.pattern.sub(rule.replace, text), rule.name


def test_lone_surrogates_and_non_ascii_text_survive_the_byte_level_substitution():
    text = f"clé \ud800 {OPENAI_KEY} naïve password=s€cret\udfff end"
    assert scrub(text) == "clé \ud800 [redacted:openai_key] naïve password=[redacted:password] end"


def test_text_made_only_of_findings_is_cut_past_the_match_budget_and_leaks_nothing():
    hostile = "password=x " * (MAX_MATCHES + 5_000)
    scrubbed, count = scrub_with_count(
        {"message": hostile, "logs": ["token=abcdefgh123", "plain line"]}
    )
    assert scrubbed["message"].endswith("[redacted:too_many_findings]")
    assert "=x" not in scrubbed["message"]
    assert scrubbed["message"].count("[redacted:password]") == MAX_MATCHES
    # Later strings that could hold a secret are cut too; plain ones are kept.
    assert scrubbed["logs"] == ["[redacted:too_many_findings]", "plain line"]
    assert count == MAX_MATCHES + 2


def test_listing_the_triggers_of_a_document_asks_the_engine_a_bounded_number_of_times(
    monkeypatch,
):
    """`scrub_parsed` listed a document's triggers with one prefilter call per occurrence,
    each re-encoding the whole text: quadratic (a 1 MB document of `@` cost 56 s)."""
    import ingest.scrubbing as scrubbing

    calls: list[int | None] = []

    class Counting:
        def search(self, text: str, pos: int | None = None):
            calls.append(pos)
            return PREFILTER.search(text, pos)

    payload = {"service": "s", "message": "sk-" * 3_000, "stacktrace": "a@b " * 3_000}
    text, wanted = json.dumps(payload), scrub(payload)
    monkeypatch.setattr(scrubbing, "PREFILTER", Counting())
    assert scrubbing.scrub_parsed(payload, text) == wanted
    assert len(calls) <= 2
