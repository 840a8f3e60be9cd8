"""The 400 answer for a request whose `Host` header is not one this instance serves.

Django refuses such a request (`DisallowedHost`) with an HTML "Bad Request (400)" page and
logs the reason, so an SDK or exporter pointed at the wrong name, or an instance whose
`ALLOWED_HOSTS` lacks the name it is reached by, shows its operator a bare 400. Machine
clients (`/api/`, `/otlp/`) get the API's error shape instead, with the header as the field
path and what to change; pages keep Django's own answer.
"""

from __future__ import annotations

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

MACHINE_PREFIXES = ("/api/", "/otlp/")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """`handler400`: the API's `{"detail": [{"loc", "msg"}]}` for a refused `Host` on a
    machine path; Django's default page for everything else."""
    if isinstance(exception, DisallowedHost) and request.path.startswith(MACHINE_PREFIXES):
        msg = (
            "this instance does not serve the host in the Host header; use the address "
            "its operator configured, or add the name to ALLOWED_HOSTS"
        )
        return JsonResponse({"detail": [{"loc": ["header", "Host"], "msg": msg}]}, status=400)
    return defaults.bad_request(request, exception)
