"""Webhook URLs: which ones may be posted to, and how they appear when they must not.

A webhook URL is a secret, so this is the one place that decides whether one is accepted
(the settings form and the sender both ask), how it is masked for people, and how it is
hashed for `Notification.target`.
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

from django.conf import settings

SLACK_HOST = "hooks.slack.com"


class WebhookURLNotAllowed(ValueError):
    """The URL is not a Slack incoming webhook (nor on RCA_WEBHOOK_ALLOWED_HOSTS)."""


def validate_webhook_url(url: str) -> None:
    """Accept `https://hooks.slack.com/...`, or any http(s) URL on an allowed host.

    The message names the host, never the URL (its path is the secret).
    """
    if any(ch < " " or ch == "\x7f" for ch in url.strip()):  # a NUL cannot even be stored
        raise WebhookURLNotAllowed("This URL holds a control character: copy it again.")
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise WebhookURLNotAllowed("This is not a valid URL.") from None
    if parts.scheme not in ("http", "https") or not host:
        raise WebhookURLNotAllowed(
            "Enter a Slack incoming webhook URL: https://hooks.slack.com/services/..."
        )
    if parts.username or parts.password:
        raise WebhookURLNotAllowed("Webhook URLs must not contain a user name or password.")
    allowed = {h.strip().lower() for h in settings.RCA_WEBHOOK_ALLOWED_HOSTS if h.strip()}
    if host in allowed:
        return
    if host != SLACK_HOST:
        raise WebhookURLNotAllowed(
            f"Webhooks may only post to https://{SLACK_HOST}/...; {host} is not allowed. "
            "An administrator can allow other hosts with RCA_WEBHOOK_ALLOWED_HOSTS."
        )
    if parts.scheme != "https":
        raise WebhookURLNotAllowed(f"Slack webhook URLs must use https://{SLACK_HOST}/...")
    if parts.path.strip("/") == "":
        raise WebhookURLNotAllowed(
            "This URL has no webhook path: copy the whole URL Slack gave you "
            f"(https://{SLACK_HOST}/services/...)."
        )


def mask_url(url: str) -> str:
    """`hooks.slack.com/…WXYZ`: enough to tell webhooks apart, too little to use one.

    Only the host name is shown, never the rest of the authority (a user or password in
    it would be a secret too); "" when there is no URL, so a page can say "not set".
    """
    if not url:
        return ""
    try:
        host = urlsplit(url).hostname or "?"
    except ValueError:
        host = "?"
    return f"{host}/…{url.rstrip('/')[-4:]}"


def target_of(url: str) -> str:
    """What `Notification.target` stores: a hash, so the table never holds the secret."""
    return hashlib.sha256(url.strip().encode()).hexdigest()
