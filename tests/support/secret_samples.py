"""Secrets of every kind the scrubber knows, and JSON values with secret-named keys.

Shared by the scrubbing unit tests and the end-to-end test that posts them over HTTP.
"""

from __future__ import annotations

from hypothesis import strategies as st

# Built at run time so that secret scanners do not flag this file.
OPENAI_KEY = "sk-proj-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SLACK_TOKEN = "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKl"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"

# Secrets assembled at run time so that secret scanners do not flag this file.
SECRETS = {
    "anthropic": "sk-ant-" + "api03-Zx9Yw8Vu7Ts6Rq5Po4Nm",
    "github_pat": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnop",
    "slack_app": "xapp-" + "1-A0123456789-1234567890123-abcdef0123456789",
    "slack_rotated": "xoxe.xoxp-" + "1-Mi0yLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MA",
    "slack_refresh": "xoxe-" + "1-My0xLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MA",
    "slack_webhook": "T00000000/B00000000/" + "XXXXXXXXXXXXXXXXXXXXXXXX",
    "huggingface": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456",
    "google": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "stripe_live": "sk_live_" + "51H8abcdefghijklmnopqrstuv",
    "stripe_restricted": "rk_live_" + "51H8abcdefghijklmnopqrstuv",
    "stripe_webhook": "whsec_" + "abcdefghijklmnopqrstuvwxyz012345",
    "pypi": "pypi-" + "AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAx",
    "gitlab": "glpat-" + "xxxxxxxxxxxxxxxxxxxx1",
    "nvidia": "nvapi-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghij",
    "npm": "npm_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    # ingest/keys.py: rc_<token_hex(4)>_<token_urlsafe(32)>
    "rootcause": "rc_" + "1a2b3c4d_" + "Zx9-Yw8_Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA9876zy",
    "azure_account_key": "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmE9PQ==",
    "azure_sig": "AbCdEf%2Bghij0123%3D",
    "redis_password": "r3dis-Pass",
    "url_password": "pa55w0rd!",
    "conn_password": "Sup3r$ecret",
    "conn_password_spaces": "two words here",
    "db_password": "hunter2",
    "dsn_key": "0123456789abcdef" + "fedcba9876543210",  # ingest/models.py: token_hex(16)
}

KINDS = [
    # (kind, text, scrubbed): the secret goes, the words around it stay.
    ("openai_key", f"key {OPENAI_KEY} invalid", "key [redacted:openai_key] invalid"),
    (
        "openai_key",
        f"anthropic {SECRETS['anthropic']} rejected",
        "anthropic [redacted:openai_key] rejected",
    ),
    (
        "github_token",
        f"push with {GITHUB_TOKEN} denied",
        "push with [redacted:github_token] denied",
    ),
    (
        "github_token",
        f"push with {SECRETS['github_pat']} denied",
        "push with [redacted:github_token] denied",
    ),
    ("slack_token", f"slack {SLACK_TOKEN} failed", "slack [redacted:slack_token] failed"),
    (
        "slack_token",
        f"socket mode {SECRETS['slack_app']} failed",
        "socket mode [redacted:slack_token] failed",
    ),
    (
        "slack_token",
        f"rotated {SECRETS['slack_rotated']} expired",
        "rotated [redacted:slack_token] expired",
    ),
    (
        "slack_token",
        f"refresh {SECRETS['slack_refresh']} expired",
        "refresh [redacted:slack_token] expired",
    ),
    (
        "slack_webhook",
        f"POST https://hooks.slack.com/services/{SECRETS['slack_webhook']} returned 404",
        "POST https://hooks.slack.com/services/[redacted:slack_webhook] returned 404",
    ),
    (
        "huggingface_token",
        f"login {SECRETS['huggingface']} failed",
        "login [redacted:huggingface_token] failed",
    ),
    (
        "aws_access_key",
        f"aws_access_key_id={AWS_KEY}",
        "aws_access_key_id=[redacted:aws_access_key]",
    ),
    ("google_api_key", f"maps {SECRETS['google']} quota", "maps [redacted:google_api_key] quota"),
    ("jwt", f"cookie {SECRETS['jwt']} stale", "cookie [redacted:jwt] stale"),
    (
        "stripe_key",
        f"charge {SECRETS['stripe_live']} failed",
        "charge [redacted:stripe_key] failed",
    ),
    (
        "stripe_key",
        f"refund {SECRETS['stripe_restricted']} failed",
        "refund [redacted:stripe_key] failed",
    ),
    (
        "stripe_key",
        f"webhook {SECRETS['stripe_webhook']} mismatch",
        "webhook [redacted:stripe_key] mismatch",
    ),
    ("pypi_token", f"twine {SECRETS['pypi']} 403", "twine [redacted:pypi_token] 403"),
    ("gitlab_token", f"clone {SECRETS['gitlab']} 401", "clone [redacted:gitlab_token] 401"),
    ("nvidia_key", f"NIM {SECRETS['nvidia']} 401", "NIM [redacted:nvidia_key] 401"),
    ("npm_token", f"publish {SECRETS['npm']} 403", "publish [redacted:npm_token] 403"),
    (
        "rootcause_key",
        f"Rootcause key {SECRETS['rootcause']} revoked",
        "Rootcause key [redacted:rootcause_key] revoked",
    ),
    (
        "private_key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\nnext",
        "[redacted:private_key]\nnext",
    ),
    (
        "bearer_token",
        "Authorization: Bearer abc.DEF-123_456",
        "Authorization: Bearer [redacted:bearer_token]",
    ),
    (
        "password",
        "postgres://admin:pa55@db:5432/app",
        "postgres://admin:[redacted:password]@db:5432/app",
    ),
    (
        "password",
        f"connect redis://:{SECRETS['redis_password']}@cache:6379/0 refused",
        "connect redis://:[redacted:password]@cache:6379/0 refused",
    ),
    (
        "password",
        f"GET https://bob:{SECRETS['url_password']}@repo.internal/simple 401",
        "GET https://bob:[redacted:password]@repo.internal/simple 401",
    ),
    (
        "secret",
        "DefaultEndpointsProtocol=https;AccountName=acct;"
        f"AccountKey={SECRETS['azure_account_key']};EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=acct;"
        "AccountKey=[redacted:secret];EndpointSuffix=core.windows.net",
    ),
    (
        "azure_sas",
        f"GET https://acct.blob.core.windows.net/c?sv=2021-08-06&sig={SECRETS['azure_sig']} 403",
        "GET https://acct.blob.core.windows.net/c?sv=2021-08-06&sig=[redacted:azure_sas] 403",
    ),
    (
        "password",
        f"Server=db;Database=app;User Id=sa;Pwd={SECRETS['conn_password']};Encrypt=true",
        "Server=db;Database=app;User Id=sa;Pwd=[redacted:password];Encrypt=true",
    ),
    (
        "password",
        f"Server=db;User Id=sa;Password={SECRETS['conn_password_spaces']};Encrypt=true",
        "Server=db;User Id=sa;Password=[redacted:password];Encrypt=true",
    ),
    (
        "password",
        f"env DB_PASSWORD={SECRETS['db_password']} DB_HOST=db",
        "env DB_PASSWORD=[redacted:password] DB_HOST=db",
    ),
    (
        "dsn_key",
        f"sentry_sdk.init('http://{SECRETS['dsn_key']}@127.0.0.1:8000/1') failed",
        "sentry_sdk.init('http://[redacted:dsn_key]@127.0.0.1:8000/1') failed",
    ),
    ("email", "mail jane.doe@example.com now", "mail [redacted:email] now"),
]


DOTNET_TYPE = (
    "System.InvalidOperationException, System.Private.CoreLib, Version=8.0.0.0, "
    "Culture=neutral, PublicKeyToken=7cec85d7bea7798e"
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=80),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.text(max_size=15) | st.sampled_from(["password", "token"]), children, max_size=5
        )
    ),
    max_leaves=30,
)
