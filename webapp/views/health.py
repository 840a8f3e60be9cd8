"""Liveness and readiness probes for load balancers, Kubernetes and `make run`."""

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from webapp.readiness import readiness


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive; touches nothing else."""
    return JsonResponse({"status": "ok"})


@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    ready, checks = readiness()
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks},
        status=200 if ready else 503,
    )
