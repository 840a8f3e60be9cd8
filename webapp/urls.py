"""URL map: health probes, the JSON API, the Sentry-compatible endpoints, the UI."""

from django.contrib import admin
from django.urls import path

from ingest import single
from ingest import views as sentry_views
from ingest.otlp import views as otlp_views
from webapp.api import api, path_view
from webapp.views import (
    analysis,
    auth,
    health,
    issues,
    project_settings,
    runbooks,
    slack,
    slo_rules,
    timeline,
)
from webapp.views.metrics import metrics as metrics_view

handler400 = "webapp.views.errors.bad_request"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    # The one-incident POST without django-ninja (issue 19); its other methods are ninja's.
    path("api/v1/incidents", single.serving_post(path_view("incidents"))),
    path("api/v1/", api.urls),
    path("api/<int:project_id>/envelope/", sentry_views.envelope, name="sentry-envelope"),
    path("api/<int:project_id>/store/", sentry_views.store, name="sentry-store"),
    path("otlp/v1/logs", otlp_views.logs, name="otlp-logs"),
    path("otlp/v1/traces", otlp_views.traces, name="otlp-traces"),
    path("admin/", admin.site.urls),
    # The incident UI (behind login)
    path("accounts/login/", auth.login, name="login"),
    path("accounts/logout/", auth.logout, name="logout"),
    path("", timeline.timeline, name="timeline"),
    path("issues/<int:issue_id>", issues.issue_detail, name="issue"),
    path("issues/<int:issue_id>/status", issues.issue_status, name="issue-status"),
    path("incidents/<int:incident_id>/analysis", analysis.analysis, name="analysis"),
    path("incidents/<int:incident_id>/reanalyse", analysis.reanalyse, name="reanalyse"),
    path("suggestions/<int:suggestion_id>/decision", analysis.decision, name="decision"),
    path("runbooks/", runbooks.runbook_list, name="runbooks"),
    path("runbooks/<slug:slug>", runbooks.runbook_detail, name="runbook"),
    path("settings/", project_settings.settings_index, name="settings"),
    path("projects/<slug:slug>/settings", project_settings.settings_page, name="project-settings"),
    path("projects/<slug:slug>/keys", project_settings.create_key, name="create-key"),
    path(
        "projects/<slug:slug>/keys/<int:key_id>/revoke",
        project_settings.revoke_key,
        name="revoke-key",
    ),
    path(
        "projects/<slug:slug>/keys/<int:key_id>/rotate",
        project_settings.rotate_key,
        name="rotate-key",
    ),
    path("projects/<slug:slug>/dsn/rotate", project_settings.rotate_dsn, name="rotate-dsn"),
    path("projects/<slug:slug>/slack", project_settings.slack_webhook, name="slack-webhook"),
    path("projects/<slug:slug>/slack/test", project_settings.slack_test, name="slack-test"),
    path("projects/<slug:slug>/slo", slo_rules.save_rule, name="slo-rule-new"),
    path("projects/<slug:slug>/slo/<int:rule_id>", slo_rules.save_rule, name="slo-rule"),
    path("slack/interactions", slack.interactions, name="slack-interactions"),
]
