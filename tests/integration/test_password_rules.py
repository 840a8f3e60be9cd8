"""Weak passwords never make it into an account, whichever way the account is created."""

from __future__ import annotations

import os
import stat

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.management import call_command
from django.core.management.base import CommandError

from webapp import bootstrap

pytestmark = pytest.mark.django_db

STRONG = "violet-kettle-orbit-47"


@pytest.mark.parametrize(
    ("weak", "why"),
    [
        ("password123", "too common"),
        ("Zx9!short", "too short"),
        ("839201746519", "entirely numeric"),
        ("carol-the-operator", "too similar"),
    ],
)
def test_createsuperuser_without_a_prompt_refuses_a_weak_password(monkeypatch, weak, why):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", weak)
    with pytest.raises(CommandError, match=why):
        call_command(
            "createsuperuser",
            interactive=False,
            username="carol-the-operator",
            email="carol@example.com",
            verbosity=0,
        )
    assert not User.objects.filter(username="carol-the-operator").exists()


def test_createsuperuser_accepts_a_strong_password(monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", STRONG)
    call_command(
        "createsuperuser", interactive=False, username="carol", email="c@example.com", verbosity=0
    )
    assert User.objects.get(username="carol").check_password(STRONG)


def test_admin_add_user_form_refuses_a_weak_password(admin_client):
    response = admin_client.post(
        "/admin/auth/user/add/",
        {
            "username": "dave",
            "usable_password": "true",
            "password1": "password",
            "password2": "password",
        },
    )
    assert response.status_code == 200
    assert "This password is too common" in response.content.decode()
    assert not User.objects.filter(username="dave").exists()

    created = admin_client.post(
        "/admin/auth/user/add/",
        {"username": "dave", "usable_password": "true", "password1": STRONG, "password2": STRONG},
    )
    assert created.status_code == 302
    assert User.objects.get(username="dave").check_password(STRONG)


def test_make_run_admin_gets_a_strong_random_password_kept_private(tmp_path):
    credentials = tmp_path / "credentials"
    text = bootstrap.ensure_demo(credentials, "http://127.0.0.1:8000")
    password = text.split("log in as admin / ", 1)[1].split(")", 1)[0]
    admin = User.objects.get(username="admin")
    assert admin.check_password(password) and len(password) >= 24
    validate_password(password, admin)  # raises if any validator objects
    assert stat.S_IMODE(os.stat(credentials).st_mode) == 0o600
