"""Slack incoming webhooks: a pure Block Kit payload builder, URL checks, and one sender.

`build_payload()` turns an event (plain data, no ORM) into the JSON Slack expects;
`send()` posts it and raises `SlackError` -- the only error it raises -- saying whether
trying again can help. Whoever calls `send()` records the attempt (see `rca.notify`).

Webhook URLs are secrets (whoever holds one can post to the channel): they are stored on
the project, hashed in `Notification.target`, and never logged -- only `mask_url()`.

One idea per module, so each can be read (and changed) on its own: :mod:`.events` (what a
message is about), :mod:`.urls` (which webhook URLs are accepted, and how they are masked
and hashed), :mod:`.payloads` (the Block Kit JSON) and :mod:`.sending` (one POST and what
Slack's answer means). Importers use this package; its submodules are an implementation
detail.
"""

from __future__ import annotations

from rca.notify.slack.events import (
    DigestEvent,
    Event,
    IssueEvent,
    IssueInfo,
    SuggestionInfo,
    TestEvent,
)
from rca.notify.slack.payloads import (
    SlackPayload,
    build_payload,
    escape,
    issue_url,
    validation_badges,
)
from rca.notify.slack.sending import SlackError, classify, parse_retry_after, send
from rca.notify.slack.urls import (
    SLACK_HOST,
    WebhookURLNotAllowed,
    mask_url,
    target_of,
    validate_webhook_url,
)

__all__ = [
    "SLACK_HOST",
    "DigestEvent",
    "Event",
    "IssueEvent",
    "IssueInfo",
    "SlackError",
    "SlackPayload",
    "SuggestionInfo",
    "TestEvent",
    "WebhookURLNotAllowed",
    "build_payload",
    "classify",
    "escape",
    "issue_url",
    "mask_url",
    "parse_retry_after",
    "send",
    "target_of",
    "validate_webhook_url",
    "validation_badges",
]
