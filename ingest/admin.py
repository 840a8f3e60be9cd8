"""Admin pages for projects (with their Sentry DSN), keys, issues and incidents."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html

from ingest.models import ApiKey, Incident, Issue, Project
from ingest.projects import project_dsn


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "created_at")
    readonly_fields = ("sentry_dsn",)

    @admin.display(description="Sentry DSN")
    def sentry_dsn(self, obj: Project) -> str:
        return format_html("<code>{}</code>", project_dsn(obj)) if obj.pk else "-"


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("prefix", "project", "name", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "secret_hash", "last_used_at")


@admin.register(Issue)
class IssueAdmin(admin.ModelAdmin):
    list_display = ("title", "project", "service", "status", "occurrence_count", "last_seen")
    list_filter = ("status", "project")


@admin.register(Incident)
class IncidentAdmin(admin.ModelAdmin):
    list_display = ("error_type", "service", "issue", "analysis_status", "received_at")
    list_filter = ("analysis_status", "source")
