"""The URL map without `ingest.single`'s plain view: `POST /api/v1/incidents` reaches
django-ninja's operation (tests/integration/test_single_post.py compares the two)."""

from webapp.urls import urlpatterns as _served

urlpatterns = [p for p in _served if str(p.pattern) != "api/v1/incidents"]
