"""Secrets never reach storage, the LLM or Slack; shapes, paths and line numbers survive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.scrubbing import scrub, scrub_with_count
from ingest.scrubbing.patterns import TOKENS
from tests.support.secret_samples import (
    AWS_KEY,
    GITHUB_TOKEN,
    KINDS,
    OPENAI_KEY,
    SLACK_TOKEN,
    json_values,
)

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        (
            f"openai.AuthenticationError: key {OPENAI_KEY} invalid",
            "openai.AuthenticationError: key [redacted:openai_key] invalid",
        ),
        ("Authorization: Bearer abc.DEF-123_456", "Authorization: Bearer [redacted:bearer_token]"),
        (f"aws_access_key_id={AWS_KEY}", "aws_access_key_id=[redacted:aws_access_key]"),
        (
            "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key=[redacted:secret]",
        ),
        ("connect password=hunter2 host=db", "connect password=[redacted:password] host=db"),
        ("passwd: s3cr3t!", "passwd: [redacted:password]"),
        ("secret='abc def'", "secret='[redacted:secret]'"),
        ("token=4f9a8b7c6d5e", "token=[redacted:token]"),
        ("OPENAI_API_KEY=whatever123", "OPENAI_API_KEY=[redacted:api_key]"),
        (
            '{"password": "p4ss", "user": "bob"}',
            '{"password": "[redacted:password]", "user": "bob"}',
        ),
        (f"push with {GITHUB_TOKEN}", "push with [redacted:github_token]"),
        (f"slack {SLACK_TOKEN} failed", "slack [redacted:slack_token] failed"),
        ("mail jane.doe@example.com now", "mail [redacted:email] now"),
        ("postgres://admin:pa55@db:5432/app", "postgres://admin:[redacted:password]@db:5432/app"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\nnext",
            "[redacted:private_key]\nnext",
        ),
    ],
)
def test_secrets_in_text_are_replaced_by_a_marker_naming_their_kind(text, scrubbed):
    assert scrub(text) == scrubbed


@pytest.mark.parametrize(
    "text",
    [
        'File "/home/me/proj/train.py", line 42, in forward',
        "mat1 and mat2 shapes cannot be multiplied (256x4096 and 768x320)",
        "copying a param with shape torch.Size([32008, 64]) from checkpoint",
        "Expected all tensors to be on the same device, cuda:1 and cuda:0!",
        "generate(max_tokens=512, max_new_tokens=20, pad_token=<pad>, eos_token: 2)",
        "tokenizer.pad_token = tokenizer.eos_token",
        "Tried to allocate 16.00 MiB (GPU 0; 39.59 GiB total capacity)",
        "@torch.no_grad() decorated forward",
    ],
)
def test_shapes_paths_line_numbers_and_ml_settings_survive(text):
    assert scrub(text) == text


def test_dev_case_texts_are_left_intact():
    for line in DEV_CASES.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        for field in ("message", "traceback"):
            assert scrub(case[field]) == case[field], case["id"]
        assert scrub(case["logs"]) == case["logs"], case["id"]


def test_values_of_secret_named_keys_are_redacted_in_nested_payloads():
    payload = {
        "service": "llm-gateway",
        "tags": {"db_password": "p", "OPENAI_API_KEY": "k", "pad_token": "<pad>", "max_tokens": 5},
        "logs": [{"message": f"calling with {OPENAI_KEY}", "token": "abcdefgh"}],
        "inference_context": {"batch_size": 32, "device": "cuda:0"},
    }
    scrubbed, count = scrub_with_count(payload)
    assert scrubbed == {
        "service": "llm-gateway",
        "tags": {
            "db_password": "[redacted:password]",
            "OPENAI_API_KEY": "[redacted:api_key]",
            "pad_token": "<pad>",
            "max_tokens": 5,
        },
        "logs": [{"message": "calling with [redacted:openai_key]", "token": "[redacted:token]"}],
        "inference_context": {"batch_size": 32, "device": "cuda:0"},
    }
    assert count == 4
    assert payload["tags"]["db_password"] == "p"  # the input is not modified


def test_long_dotted_and_email_like_text_is_scrubbed_in_linear_time():
    # Regression: unbounded lazy key patterns were quadratic on "a.a.a.a..." (minutes).
    text = "a." * 20_000 + " user@" + "b." * 5_000
    assert scrub(text) == text


def test_non_text_values_pass_through():
    assert scrub(None) is None
    assert scrub(3.5) == 3.5
    assert scrub_with_count(["plain"]) == (["plain"], 0)


def test_absurdly_deep_nesting_is_cut_rather_than_left_unscrubbed():
    value: object = OPENAI_KEY
    for _ in range(200):
        value = [value]
    assert OPENAI_KEY not in json.dumps(scrub(value))


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_scrubs_without_raising(value):
    scrubbed, count = scrub_with_count(value)
    assert count >= 0
    assert type(scrubbed) is type(value) or isinstance(scrubbed, str)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_scrubbing_twice_changes_nothing_more(text):
    once = scrub(text)
    assert scrub(once) == once


@pytest.mark.parametrize(("kind", "text", "scrubbed"), KINDS, ids=[row[0] for row in KINDS])
def test_each_kind_of_secret_is_replaced_and_the_words_around_it_stay(kind, text, scrubbed):
    assert scrub(text) == scrubbed
    assert f"[redacted:{kind}]" in scrubbed


def test_every_kind_the_scrubber_names_has_a_row():
    assert set(TOKENS) <= {row[0] for row in KINDS}
