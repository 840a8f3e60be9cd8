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
detail -- except the Accept / Reject buttons' two modules, which the interactivity view
imports directly: :mod:`.interactions` (signature check and payload parsing, pure) and
:mod:`.clicks` (what a verified click does; the only one here that uses the ORM, so it
is not imported by this package).
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
    ACCEPT_ACTION,
    DECISION_BLOCK,
    REJECT_ACTION,
    SlackPayload,
    build_payload,
    decided_blocks,
    decision_block,
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
    "ACCEPT_ACTION",
    "DECISION_BLOCK",
    "REJECT_ACTION",
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
    "decided_blocks",
    "decision_block",
    "escape",
    "issue_url",
    "mask_url",
    "parse_retry_after",
    "send",
    "target_of",
    "validate_webhook_url",
    "validation_badges",
]
