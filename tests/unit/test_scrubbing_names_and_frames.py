"""Type names and frame locations are never taken for secrets; frames still lose
unmistakable tokens and their locals."""

from __future__ import annotations

import pytest

from ingest.scrubbing import scrub
from tests.support.secret_samples import (
    DOTNET_TYPE,
    GITHUB_TOKEN,
)


@pytest.mark.parametrize(
    "type_name",
    [
        DOTNET_TYPE,
        "System.Private.CoreLib, Version=8.0.0.0, Culture=neutral, "
        "PublicKeyToken=7cec85d7bea7798e.System.InvalidOperationException",
        "com.example.auth.TokenExpiredException",
        "secrets.SecretNotFound",
        "*errors.errorString",
    ],
)
def test_type_names_are_never_redacted(type_name):
    payload = {
        "error_type": type_name,
        "message": f"Unhandled {type_name}",
        "stacktrace": [{"type": type_name, "message": "m", "frames": []}],
    }
    assert scrub(payload) == payload


def test_frame_locations_are_not_redacted_by_key_value_rules():
    frame = {
        "filename": "/srv/app/config/password=defaults.py",
        "function": "lambda$refreshToken: value",
        "module": "System.Private.CoreLib, Version=8.0.0.0, PublicKeyToken=7cec85d7bea7798e",
        "lineno": 12,
        "in_app": True,
    }
    assert scrub({"stacktrace": [frame]}) == {"stacktrace": [frame]}


def test_frames_still_lose_unmistakable_tokens_and_their_locals():
    frame = {
        "filename": f"/tmp/clone-{GITHUB_TOKEN}/train.py",
        "function": "forward",
        "context_line": 'client = OpenAI(api_key="abcdefgh12345")',
        "vars": {"password": "hunter2", "batch": "32"},
    }
    scrubbed = scrub({"stacktrace": [frame]})["stacktrace"][0]
    assert scrubbed == {
        "filename": "/tmp/clone-[redacted:github_token]/train.py",
        "function": "forward",
        "context_line": 'client = OpenAI(api_key="[redacted:api_key]")',
        "vars": {"password": "[redacted:password]", "batch": "32"},
    }
