"""URL map: health probes, the JSON API, the Sentry-compatible endpoints, the UI."""

from django.contrib import admin
from django.urls import path

from ingest import views as sentry_views
from ingest.api import api
from webapp.views import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("api/v1/", api.urls),
    path("api/<int:project_id>/envelope/", sentry_views.envelope, name="sentry-envelope"),
    path("api/<int:project_id>/store/", sentry_views.store, name="sentry-store"),
    path("admin/", admin.site.urls),
]
