"""What a verified Slack click does: refuse replays, decide, and answer through Slack.

The one module of this package that touches the database: a click is checked by
:mod:`.interactions` (pure), then `receive()` remembers the signed request (a second
sight is a replay), finds the suggestion message our webhook posted, and records an
Accept with the Slack user as the actor. A Reject is never recorded from Slack: a button
cannot carry the reason every rejection needs, so the Reject button opens the issue page
(where the reason is typed) and the clicker gets an ephemeral reply saying so.

Slack wants its answer within 3 s, so the message update is posted to `response_url`
after the answer, from a short-lived thread (`reply_later`); it is cosmetic -- the
decision is already committed -- so a lost update costs only a stale message.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from rca.feedback import decide
from rca.models import Decision, Notification, SlackRequest, Suggestion
from rca.notify.slack.interactions import WINDOW_SECONDS, Click, Refused, parse, verify
from rca.notify.slack.payloads import (
    ACCEPT_ACTION,
    DECISION_BLOCK,
    Block,
    decided_blocks,
    suggestion_url,
)
from rca.notify.slack.sending import SlackError, send

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reply:
    """A message to post to the click's `response_url` once Slack has its answer."""

    url: str
    body: dict[str, Any]


def receive(secret: str, timestamp: str, signature: str, body: bytes) -> Reply:
    """Act on one signed click and say what to post back; `Refused` when it is not one."""
    verify(secret, timestamp, signature, body, time.time())
    remember(signature)
    click = parse(body)
    suggestion = Suggestion.objects.select_related("issue").filter(pk=click.suggestion_id).first()
    message = posted_message(suggestion) if suggestion is not None else None
    if suggestion is None or message is None:
        raise Refused(404, ["body", "payload", "actions", 0, "value"], "No such suggestion here.")
    if click.action_id == ACCEPT_ACTION:
        return accept(suggestion, click, message)
    return reject_on_the_page(suggestion, click)


def remember(signature: str) -> None:
    """Record a signed request once; `Refused` (409) if it was already seen.

    Called only after the signature and timestamp passed, so only Slack's requests
    are stored; rows past twice the window can never match a fresh request again.
    """
    now = timezone.now()
    SlackRequest.objects.filter(
        received_at__lt=now - timedelta(seconds=2 * WINDOW_SECONDS)
    ).delete()
    try:
        with transaction.atomic():
            SlackRequest.objects.create(signature=signature.removeprefix("v0=")[:64])
    except IntegrityError:
        raise Refused(
            409, ["header", "X-Slack-Signature"], "This request was already handled."
        ) from None


def posted_message(suggestion: Suggestion) -> dict[str, Any] | None:
    """The suggestion message our webhook sent with buttons for this suggestion, if any.

    A suggestion that was never posted with buttons cannot be decided from Slack, even by
    a validly signed request (another app sharing the secret, an old message).
    """
    button = {"action_id": ACCEPT_ACTION, "value": str(suggestion.pk)}
    sent = (
        Notification.objects.filter(
            issue_id=suggestion.issue_id,
            kind=Notification.Kind.SUGGESTION,
            status=Notification.Status.SENT,
            payload__blocks__contains=[{"block_id": DECISION_BLOCK, "elements": [button]}],
        )
        .order_by("-created_at")
        .first()
    )
    return sent.payload if sent is not None else None


def accept(suggestion: Suggestion, click: Click, message: dict[str, Any]) -> Reply:
    """Record the Accept with the Slack user, and replace the message: no buttons, who."""
    decide(suggestion, None, Decision.Verdict.ACCEPTED, actor=click.actor)
    blocks: list[Block] = message.get("blocks", [])
    line = f"✅ Accepted by {click.user_name or click.user_id} in Slack"
    return Reply(
        click.response_url,
        {
            "replace_original": True,
            "text": str(message.get("text", "")),
            "blocks": [dict(b) for b in decided_blocks(blocks, line)],
        },
    )


def reject_on_the_page(suggestion: Suggestion, click: Click) -> Reply:
    """Nothing is recorded: tell the clicker (only them) where to give the reason."""
    page = suggestion_url(suggestion.issue_id, suggestion.incident_id)
    text = (
        f"Not rejected yet: a rejection needs a reason, for the next engineer. Write it on "
        f"<{page}|issue #{suggestion.issue_id}> (the Reject button opened it)."
    )
    return Reply(
        click.response_url,
        {"response_type": "ephemeral", "replace_original": False, "text": text},
    )


def post_reply(reply: Reply) -> None:
    """POST `reply` to Slack's response_url once; failures are logged, never raised."""
    try:
        send(reply.url, reply.body)
    except SlackError as err:
        log.warning("slack response_url: %s", err)


def reply_later(reply: Reply) -> None:
    """Post `reply` after the transaction commits, in a thread, so Slack's answer is not held."""

    def start() -> None:
        threading.Thread(target=post_reply, args=(reply,), name="slack-reply", daemon=True).start()

    transaction.on_commit(start)
