"""Sending: one POST to a webhook, and what Slack's answer means for trying again.

`send()` raises only `SlackError`, whose `permanent` flag tells the caller (see
`rca.notify`) whether to retry or give up; `classify()` holds that decision as a pure
function so it can be tested without a server.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from rca.notify.slack.urls import WebhookURLNotAllowed, mask_url, validate_webhook_url

log = logging.getLogger(__name__)


class SlackError(Exception):
    """A failed post: `permanent` means the same request can never succeed."""

    def __init__(
        self,
        message: str,
        *,
        permanent: bool,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.permanent = permanent
        self.retry_after = retry_after
        self.status = status


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - timezone.now()).total_seconds())


def classify(status: int, body: str, retry_after: str | None = None) -> SlackError | None:
    """None for success; otherwise the SlackError the answer means (pure, for tests)."""
    if 200 <= status < 300:
        return None
    code = body.strip()[:200]
    message = f"Slack answered {status}" + (f" {code}" if code else "")
    if status == 429:
        return SlackError(
            message, permanent=False, retry_after=parse_retry_after(retry_after), status=status
        )
    if status >= 500 or status == 408:
        return SlackError(message, permanent=False, status=status)
    if 300 <= status < 400:
        return SlackError(
            f"{message}: a redirect, which is not followed; check the webhook URL",
            permanent=True,
            status=status,
        )
    # 400 invalid_payload, 403 invalid_token, 404 no_service / channel_not_found, 410 ...:
    # any other 4xx answers the same request the same way, so retrying cannot help.
    return SlackError(message, permanent=True, status=status)


def send(url: str, payload: Mapping[str, Any], timeout: float | None = None) -> None:
    """POST `payload` to the webhook once; return on success, raise `SlackError` otherwise.

    `payload` is any JSON object: a `SlackPayload` fresh from `build_payload`, or one read
    back from a notification row.
    """
    import requests

    try:
        validate_webhook_url(url)
    except WebhookURLNotAllowed as exc:
        raise SlackError(f"Webhook URL refused: {exc}", permanent=True) from None
    timeout = settings.RCA_SLACK_TIMEOUT if timeout is None else timeout
    masked = mask_url(url)
    try:
        response = requests.post(url, json=payload, timeout=timeout, allow_redirects=False)
    except requests.Timeout:
        log.warning("slack %s: no answer within %ss", masked, timeout)
        raise SlackError(f"No answer from Slack within {timeout:g}s", permanent=False) from None
    except requests.RequestException as exc:
        # str(exc) contains the URL: report only the kind of failure.
        log.warning("slack %s: %s", masked, type(exc).__name__)
        raise SlackError(
            f"Could not reach {urlsplit(url).hostname}: {type(exc).__name__}", permanent=False
        ) from None
    error = classify(response.status_code, response.text, response.headers.get("Retry-After"))
    if error is not None:
        log.warning("slack %s: %s", masked, error)
        raise error
    log.info("slack %s: delivered", masked)
