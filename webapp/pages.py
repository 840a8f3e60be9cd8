"""What every UI response carries: login required, security headers, never cached.

The Content-Security-Policy allows only this origin's scripts and styles (htmx is served
from our static files and no template uses inline script or style), so an injected tag in
user-supplied text could not run even if escaping were ever missed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponseBase
from django.utils.cache import add_never_cache_headers, patch_vary_headers

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
    "Cross-Origin-Resource-Policy": "same-origin",
}

View = Callable[..., HttpResponseBase]


def secure(view: View) -> View:
    """Add the security headers; keep pages out of caches (they show private data)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        add_never_cache_headers(response)
        patch_vary_headers(response, ("HX-Request",))
        return response

    return wrapper


def page(view: View) -> View:
    """A UI view: behind login, with the security headers."""
    return secure(login_required(view))


def is_fragment(request: HttpRequest) -> bool:
    """htmx asked for a part of the page (a history restore wants the whole page)."""
    htmx = getattr(request, "htmx", None)
    return htmx is not None and bool(htmx) and not htmx.history_restore_request
