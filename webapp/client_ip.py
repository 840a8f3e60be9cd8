"""The client's address for login throttling: the peer, or what our own proxies say it was.

X-Forwarded-For is written by whoever sends the request, so only the entries appended by
the `RCA_TRUSTED_PROXIES` proxies in front of us are believed, counted from the right;
anything further left could be forged by the client to dodge (or aim) a lockout.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def _valid(address: str) -> str | None:
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


def client_ip(request: HttpRequest) -> str | None:
    """The address a lockout applies to (django-axes' AXES_CLIENT_IP_CALLABLE)."""
    peer = request.META.get("REMOTE_ADDR") or None
    proxies = settings.RCA_TRUSTED_PROXIES
    if proxies <= 0:
        return peer
    hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [h for h in hops if h]
    # Each proxy appends the address it received from: `proxies` entries from the right
    # is what the outermost of ours saw, the client as far as we can know.
    if len(hops) >= proxies:
        return _valid(hops[-proxies]) or peer
    return peer
