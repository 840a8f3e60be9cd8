"""Production settings as an operator meets them: no key, no start; `check --deploy` clean."""

from __future__ import annotations

import os
import secrets
import stat
import subprocess
import sys

import pytest

from tests.support.processes import REPO
from webapp import instance_secret

#: Variables that shape the settings under test; each run states its own.
# What the test session's own environment may carry that a deployment never sets: the
# browser tests export DJANGO_ALLOW_ASYNC_UNSAFE for pytest-django's live_server.
SHAPING = (
    "SECRET_KEY",
    "DEBUG",
    "RCA_TLS",
    "ALLOWED_HOSTS",
    "RCA_HSTS_PRELOAD",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
)


@pytest.fixture(autouse=True)
def _no_dotenv_key() -> None:
    dotenv = REPO / ".env"
    if dotenv.exists() and "SECRET_KEY=" in dotenv.read_text().replace("SECRET_KEY=\n", ""):
        pytest.skip(".env in this checkout sets SECRET_KEY")


def manage(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in SHAPING}
    # Parsed by the settings, never connected to: checks below need no database.
    base.update(DATABASE_URL="postgresql://check@127.0.0.1:9/check", RCA_DATA_DIR=str(tmp_path))
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def production(**extra: str) -> dict[str, str]:
    return {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DEBUG": "false",
        "RCA_TLS": "true",
        "ALLOWED_HOSTS": "rootcause.example.com",
        **extra,
    }


def test_without_a_secret_key_nothing_starts_and_the_message_says_what_to_set(tmp_path):
    result = manage(tmp_path, "check")
    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set" in result.stderr
    assert "secrets.token_urlsafe(50)" in result.stderr


def test_the_wsgi_application_refuses_to_load_without_a_secret_key(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in SHAPING}
    env.update(DATABASE_URL="postgresql://check@127.0.0.1:9/check", RCA_DATA_DIR=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-c", "import webapp.wsgi"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and "SECRET_KEY is not set" in result.stderr


@pytest.mark.parametrize("preload", ["false", "true"])
def test_check_deploy_is_clean_with_the_production_configuration(tmp_path, preload):
    result = manage(
        tmp_path,
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        **production(RCA_HSTS_PRELOAD=preload),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
    assert "WARNING" not in result.stdout + result.stderr.replace("INFO", "")


#: Run inside `manage.py shell` with the settings under test: what a browser would get.
BROWSER = """
from django.test import Client
c = Client(HTTP_HOST="rootcause.example.com")
plain = c.get("/accounts/login/")
print("plain", plain.status_code, plain.get("Location", ""))
print("probe", c.get("/healthz").status_code, c.get("/readyz").status_code in (200, 503))
tls = c.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
print("tls", tls.status_code, tls.get("Strict-Transport-Security", ""))
print("cookie", tls.cookies["csrftoken"]["secure"])
"""


def test_behind_tls_cookies_are_secure_hsts_is_sent_and_http_redirects(tmp_path):
    result = manage(tmp_path, "shell", "--no-imports", "-c", BROWSER, **production())
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "plain 301 https://rootcause.example.com/accounts/login/" in lines
    assert "probe 200 True" in lines  # probes speak plain http and are not redirected
    assert "tls 200 max-age=31536000; includeSubDomains" in lines
    assert "cookie True" in lines


def test_without_tls_nothing_redirects_for_make_run(tmp_path):
    env = {"SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "rootcause.example.com"}
    result = manage(tmp_path, "shell", "--no-imports", "-c", BROWSER, **env)
    assert result.returncode == 0, result.stderr
    assert "plain 200 " in result.stdout.splitlines()
    assert "tls 200 " in result.stdout.splitlines()  # no HSTS header without TLS
    assert "cookie " in result.stdout and "cookie True" not in result.stdout


def test_make_run_secret_is_generated_once_and_private(tmp_path):
    path = tmp_path / "secret_key"
    first = instance_secret.load_or_create(path)
    assert len(first) >= 50
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert instance_secret.load_or_create(path) == first
    assert instance_secret.load_or_create(tmp_path / "other" / "secret_key") != first
