"""An incident carrying every kind of secret, posted over HTTP, is stored with none of them."""

from __future__ import annotations

import pytest
import requests
from django.db import connection

from tests.support.factories import project_with_key
from tests.support.secret_samples import (
    AWS_KEY,
    DOTNET_TYPE,
    GITHUB_TOKEN,
    KINDS,
    OPENAI_KEY,
    SECRETS,
    SLACK_TOKEN,
)

pytestmark = pytest.mark.django_db(transaction=True)

EVERY_SECRET = [
    *SECRETS.values(),
    OPENAI_KEY,
    GITHUB_TOKEN,
    SLACK_TOKEN,
    AWS_KEY,
    "abc.DEF-123_456",  # the bearer token
    "MIIEow",  # the private key's body
    "jane.doe@example.com",
    "tag-Pa55word",
    "ctx-Api-Key-123",
    "var-Secret-456",
    "log-Token-789xyz",
]


def _stored_rows() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT row_to_json(i)::text FROM ingest_incident i")
        incidents = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT row_to_json(i)::text FROM ingest_issue i")
        issues = [row[0] for row in cursor.fetchall()]
    assert len(incidents) == 1 and len(issues) == 1
    return incidents[0] + issues[0]


def test_an_incident_carrying_every_kind_of_secret_is_stored_without_any(live_server):
    tenant = project_with_key()
    texts = [text for _, text, _ in KINDS]
    payload = {
        "service": "llm-gateway",
        "error_type": DOTNET_TYPE,
        "message": "\n".join(texts[:10]),
        "logs": [
            *texts[10:18],
            *({"level": "error", "message": text} for text in texts[18:24]),
            {"level": "error", "message": "login failed", "session_token": "log-Token-789xyz"},
        ],
        "stacktrace": [
            {
                "filename": "/srv/gateway/client.py",
                "function": "connect",
                "module": DOTNET_TYPE.split(", ", 1)[1],
                "lineno": 40 + index,
                "context_line": text,
                "vars": {"dsn": text, "client_secret": "var-Secret-456", "retries": "3"},
            }
            for index, text in enumerate(texts[24:])
        ],
        "tags": {"DB_PASSWORD": "tag-Pa55word", "region": "eu-west-1"},
        "inference_context": {
            "model_id": "ranker-v3",
            "batch_size": 8,
            "api_key": "ctx-Api-Key-123",
        },
    }
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents", json=payload, headers=tenant.auth, timeout=20
    )
    assert resp.status_code == 202, resp.text

    stored = _stored_rows()
    leaked = [secret for secret in EVERY_SECRET if secret in stored]
    assert leaked == []
    for kind, _, _ in KINDS:
        assert f"[redacted:{kind}]" in stored, kind
    # The harmless rest survives: words around secrets, the type name, frames, settings.
    for kept in ("refused", "EndpointSuffix=core.windows.net", "eu-west-1", "ranker-v3"):
        assert kept in stored
    incident = requests.get(
        f"{live_server.url}/api/v1/incidents/{resp.json()['incident_id']}",
        headers=tenant.auth,
        timeout=5,
    ).json()
    assert incident["error_type"] == DOTNET_TYPE
    frames = incident["exceptions"][-1]["frames"]
    assert {frame["function"] for frame in frames} == {"connect"}
    assert incident["inference_context"]["batch_size"] == 8


def test_a_sentry_event_keeps_its_type_and_frames_and_loses_its_secrets(live_server):
    project = project_with_key("sentry-scrub").project
    event = {
        "event_id": "9a0b8c7d6e5f40312a1b2c3d4e5f6071",
        "platform": "csharp",
        "exception": {
            "values": [
                {
                    "type": "System.InvalidOperationException",
                    "module": DOTNET_TYPE.split(", ", 1)[1],
                    "value": f"Redis refused redis://:{SECRETS['redis_password']}@cache:6379",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "Services/TokenService.cs",
                                "function": "RefreshToken",
                                "module": "Api.Services.TokenService",
                                "lineno": 42,
                                "in_app": True,
                                "vars": {"clientSecret": "var-Secret-456", "attempt": "2"},
                            }
                        ]
                    },
                }
            ]
        },
        "tags": {"db_password": "tag-Pa55word"},
        "extra": {"connection": f"Server=db;Pwd={SECRETS['conn_password']};"},
    }
    resp = requests.post(
        f"{live_server.url}/api/{project.pk}/store/",
        json=event,
        headers={"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={project.sentry_key}"},
        timeout=20,
    )
    assert resp.status_code == 200, resp.text

    stored = _stored_rows()
    for secret in (
        SECRETS["redis_password"],
        SECRETS["conn_password"],
        "var-Secret-456",
        "tag-Pa55word",
    ):
        assert secret not in stored
    assert "System.InvalidOperationException" in stored
    assert "PublicKeyToken=7cec85d7bea7798e" in stored  # public, and part of the type's module
    for kept in ("Services/TokenService.cs", "RefreshToken", "Api.Services.TokenService"):
        assert kept in stored
