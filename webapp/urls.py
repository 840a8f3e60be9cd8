"""URL map: health probes, the API, the UI."""

from django.contrib import admin
from django.urls import path

from webapp.views import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("admin/", admin.site.urls),
]
