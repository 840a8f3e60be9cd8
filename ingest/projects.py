"""Project-level facts shown to users: the Sentry DSN of a project on this instance."""

from __future__ import annotations

from django.conf import settings

from ingest.models import Project
from ingest.sentry.auth import build_dsn


def project_dsn(project: Project, base_url: str | None = None) -> str:
    """The DSN a Sentry SDK is configured with, on this instance's public URL."""
    scheme, _, host = (base_url or settings.RCA_BASE_URL).partition("://")
    return build_dsn(project.sentry_key, host, project.pk, scheme=scheme or "http")
