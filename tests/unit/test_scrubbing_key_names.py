"""Values of secret-named keys are redacted in text and in structured fields; harmless
names that merely look alike survive."""

from __future__ import annotations

import json

import pytest

from ingest.scrubbing import scrub

SECRET_NAMES = [
    ("DB_PASSWORD", "password"),
    ("db_password", "password"),
    ("dbPassword", "password"),
    ("MYSQL_ROOT_PASSWD", "password"),
    ("Pwd", "password"),
    ("passphrase", "password"),
    ("CLIENT_SECRET", "secret"),
    ("webhook-secret", "secret"),
    ("GITHUB_TOKEN", "token"),
    ("X-Auth-Token", "token"),
    ("refresh_token", "token"),
    ("STRIPE_KEY", "secret"),
    ("ENCRYPTION_KEY", "secret"),
    ("AccountKey", "secret"),
    ("api_key", "api_key"),
    ("apiKey", "api_key"),
    ("x-api-key", "api_key"),
    ("authorization", "authorization"),
    ("csrftoken", "token"),
    ("dbpassword", "password"),
    ("clientsecret", "secret"),
    ("Set-Cookie", "cookie"),
]
VALUE = "S3cr3t-Value_42"


@pytest.mark.parametrize(("name", "kind"), SECRET_NAMES)
@pytest.mark.parametrize(
    "form",
    ["{name}={value}", "{name}: {value}", "{name} = '{value}'", '{{"{name}": "{value}"}}'],
)
def test_a_secret_named_key_loses_its_value_in_text(name, kind, form):
    text = "config " + form.format(name=name, value=VALUE) + " loaded"
    scrubbed = scrub(text)
    assert VALUE not in scrubbed
    assert scrubbed == text.replace(VALUE, f"[redacted:{kind}]")


@pytest.mark.parametrize(("name", "kind"), SECRET_NAMES)
def test_a_secret_named_key_loses_its_value_in_every_structured_field(name, kind):
    payload = {
        "tags": {name: VALUE, "region": "eu-west-1"},
        "inference_context": {name: VALUE, "batch_size": 8},
        "stacktrace": [{"filename": "/srv/app.py", "function": "run", "vars": {name: VALUE}}],
        "logs": [{"level": "error", "message": "boom", name: VALUE}],
    }
    scrubbed = scrub(payload)
    assert VALUE not in json.dumps(scrubbed)
    assert scrubbed["tags"] == {name: f"[redacted:{kind}]", "region": "eu-west-1"}
    assert scrubbed["inference_context"]["batch_size"] == 8
    assert scrubbed["stacktrace"][0]["function"] == "run"


def test_a_secret_in_an_escaped_json_string_is_redacted():
    text = 'payload="{\\"db_password\\": \\"hunter2\\", \\"user\\": \\"bob\\"}"'
    assert (
        scrub(text)
        == 'payload="{\\"db_password\\": \\"[redacted:password]\\", \\"user\\": \\"bob\\"}"'
    )


@pytest.mark.parametrize(
    "text",
    [
        "pad_token=<pad> eos_token=2 max_tokens=512 num_tokens: 1024",
        "tokenizer.pad_token = tokenizer.eos_token",
        "primary_key=True cache_key=user:42 sort_key=ts input_key=text",
        "Unexpected key: model.embed_tokens.weight",
        "Missing key(s) in state_dict: decoder.key.weight",
        "KeyError: 'api_key'",
        "GITHUB_TOKEN: short",  # a token is never five characters
        "token == None and password == expected",
        "SecretKey::from_bytes(raw)",
        "PWD=/srv/app HOME=/root",
        "password=None api_key=null",
        "Token expired for user 42; Basic authentication disabled",
        "monkey=5 hotkey=ctrl",
    ],
)
def test_harmless_names_and_values_survive(text):
    assert scrub(text) == text


def test_harmless_structured_keys_survive():
    tags = {"pad_token": "<pad>", "max_tokens": 5, "token": 3, "primary_key": "id", "key": "v"}
    assert scrub({"tags": tags}) == {"tags": tags}
