"""Guessing passwords: a few tries, then the account and the address are locked for a while."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.db.models import F

from ingest.models import Project
from tests.support.ui import PASSWORD, member

pytestmark = pytest.mark.django_db

LOCKED = "Too many failed log-in attempts"


@pytest.fixture
def project():
    return Project.objects.create(name="Ranker", slug="ranker")


def login(client, username: str, password: str, ip: str, url: str = "/accounts/login/"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=ip)


def fail_until_locked(client, username: str, ip: str) -> list[int]:
    return [
        login(client, username, f"guess-{n}", ip).status_code
        for n in range(settings.AXES_FAILURE_LIMIT)
    ]


def test_wrong_passwords_lock_the_account_even_for_the_right_password(client, project):
    member(project, "alice")
    codes = fail_until_locked(client, "alice", "10.0.0.1")
    assert codes[:-1] == [200] * (settings.AXES_FAILURE_LIMIT - 1)  # the form says "try again"
    assert codes[-1] == 429

    refused = login(client, "alice", PASSWORD, "10.0.0.1")
    assert refused.status_code == 429
    page = refused.content.decode()
    assert LOCKED in page and "15 minutes" in page and 'role="alert"' in page
    assert refused["Content-Security-Policy"].startswith("default-src 'self'")
    assert "_auth_user_id" not in client.session
    # per user: the same account from another address is locked too
    assert login(client, "alice", PASSWORD, "10.9.9.9").status_code == 429
    # the guesses are not kept anywhere a reader of the attempts table could see
    stored = " ".join(AccessAttempt.objects.values_list("post_data", flat=True))
    assert "guess-" not in stored and PASSWORD not in stored


def test_another_user_at_another_address_logs_in_while_one_is_locked(client, project):
    member(project, "alice")
    member(project, "bob")
    fail_until_locked(client, "alice", "10.0.0.1")
    response = login(client, "bob", PASSWORD, "10.0.0.2")
    assert response.status_code == 302 and response["Location"] == "/"


def test_one_address_guessing_many_usernames_is_locked_for_all_of_them(client, project):
    member(project, "bob")
    for n in range(settings.AXES_FAILURE_LIMIT):
        login(client, f"user{n}", "hunter2hunter2", "10.0.0.66")
    assert login(client, "bob", PASSWORD, "10.0.0.66").status_code == 429
    assert login(client, "bob", PASSWORD, "10.0.0.7").status_code == 302


def test_after_the_cool_off_the_right_password_works_again(client, project):
    member(project, "alice")
    fail_until_locked(client, "alice", "10.0.0.1")
    assert login(client, "alice", PASSWORD, "10.0.0.1").status_code == 429
    minutes_pass(16)
    response = login(client, "alice", PASSWORD, "10.0.0.1")
    assert response.status_code == 302 and response["Location"] == "/"


def minutes_pass(minutes: int) -> None:
    """As far as the attempt records are concerned."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=minutes))


def test_retrying_during_the_lockout_does_not_extend_it(client, project):
    member(project, "alice")
    fail_until_locked(client, "alice", "10.0.0.1")
    minutes_pass(10)
    assert login(client, "alice", PASSWORD, "10.0.0.1").status_code == 429
    assert login(client, "alice", "one-more-guess", "10.0.0.1").status_code == 429
    minutes_pass(6)  # 16 minutes after the lockout began
    assert login(client, "alice", PASSWORD, "10.0.0.1").status_code == 302


def test_admin_login_is_throttled_too(client, project):
    from django.contrib.auth.models import User

    User.objects.create_superuser("root", "root@localhost", PASSWORD)
    for n in range(settings.AXES_FAILURE_LIMIT):
        login(client, "root", f"guess-{n}", "10.0.0.3", url="/admin/login/")
    refused = login(client, "root", PASSWORD, "10.0.0.3", url="/admin/login/")
    assert refused.status_code == 429 and LOCKED in refused.content.decode()
    assert client.get("/admin/").status_code == 302  # still not logged in


def test_a_successful_login_forgets_earlier_typos(client, project):
    member(project, "alice")
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        login(client, "alice", f"typo-{n}", "10.0.0.1")
    assert login(client, "alice", PASSWORD, "10.0.0.1").status_code == 302
    client.logout()
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        login(client, "alice", f"typo-{n}", "10.0.0.1")
    assert login(client, "alice", PASSWORD, "10.0.0.1").status_code == 302


def test_forwarded_for_is_believed_only_from_configured_proxies(client, project, settings):
    member(project, "bob")
    # No trusted proxy: a client rotating X-Forwarded-For stays one address.
    for n in range(settings.AXES_FAILURE_LIMIT):
        client.post(
            "/accounts/login/",
            {"username": f"user{n}", "password": "hunter2hunter2"},
            REMOTE_ADDR="10.0.0.66",
            HTTP_X_FORWARDED_FOR=f"192.0.2.{n}",
        )
    assert login(client, "bob", PASSWORD, "10.0.0.66").status_code == 429

    # Behind one proxy: the address that proxy saw is the client's.
    settings.RCA_TRUSTED_PROXIES = 1
    ok = client.post(
        "/accounts/login/",
        {"username": "bob", "password": PASSWORD},
        REMOTE_ADDR="10.0.0.66",
        HTTP_X_FORWARDED_FOR="198.51.100.1, 203.0.113.5",
    )
    assert ok.status_code == 302
    assert AccessLog.objects.filter(username="bob", ip_address="203.0.113.5").exists()
