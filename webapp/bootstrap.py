"""First-run setup for `make run`: a demo project, an admin user and an API key.

Credentials exist in plaintext only at creation; they are printed and kept in
`.data/credentials` (mode 600) so a local instance can be used again after a restart.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password

from ingest.keys import create_key
from ingest.models import Project
from ingest.projects import project_dsn
from webapp.models import Membership


def _ensure_responder(user, project: Project) -> None:
    """The admin sees and decides on the demo project's issues in the UI."""
    if user is not None:
        Membership.objects.get_or_create(
            user=user, project=project, defaults={"role": Membership.Role.RESPONDER}
        )


def ensure_demo(credentials_file: Path, base_url: str) -> str:
    """Create what is missing and return the text to show the user."""
    project, _ = Project.objects.get_or_create(slug="demo", defaults={"name": "Demo"})
    user_model = get_user_model()
    if credentials_file.exists():
        _ensure_responder(user_model.objects.filter(username="admin").first(), project)
        return credentials_file.read_text()

    password = secrets.token_urlsafe(18)  # 144 random bits, 24 characters
    admin = user_model.objects.filter(username="admin").first()
    validate_password(password, admin or user_model(username="admin", email="admin@localhost"))
    if admin is None:
        admin = user_model.objects.create_superuser("admin", "admin@localhost", password)
    else:
        admin.set_password(password)
        admin.save(update_fields=["password"])
    _ensure_responder(admin, project)
    _, api_key = create_key(project, name="make-run")

    text = (
        f"Rootcause is at {base_url}/  (log in as admin / {password})\n"
        f"Project 'demo' API key: {api_key}\n"
        f"Sentry SDK DSN: {project_dsn(project, base_url)}\n"
        f"Send an incident:\n"
        f"  curl -sS -X POST {base_url}/api/v1/incidents \\\n"
        f"    -H 'Authorization: Bearer {api_key}' -H 'Content-Type: application/json' \\\n"
        f'    -d \'{{"service": "ranker", "error_type": "RuntimeError", '
        f'"message": "mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)"}}\'\n'
    )
    credentials_file.parent.mkdir(parents=True, exist_ok=True)
    credentials_file.write_text(text)
    os.chmod(credentials_file, 0o600)
    return text
