"""Slack's button clicks as data: checking the signature, reading the payload.

Slack POSTs each click to ``/slack/interactions`` as a form with one field, ``payload``
(JSON, type ``block_actions``), and signs it with the app's signing secret:
``X-Slack-Signature: v0=hex(HMAC-SHA256(secret, "v0:{X-Slack-Request-Timestamp}:{body}"))``.
Pure functions, so the checks can be tested (and fuzzed) without a server; what a click
does to the database is :mod:`.clicks`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import string
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from rca.notify.slack.payloads import ACCEPT_ACTION, REJECT_ACTION
from rca.notify.slack.urls import WebhookURLNotAllowed, validate_webhook_url

# Slack's own advice: a request whose timestamp is more than five minutes off is refused,
# so a captured request cannot be replayed later (and inside the window, see `.clicks`).
WINDOW_SECONDS = 300
# Our suggestion messages come back (as `message`) in a few KiB; Slack's largest possible
# message (50 blocks of 3,000 characters), form-encoded, still fits.
MAX_BODY_BYTES = 512 * 1024
_ID_CHARS = frozenset(string.ascii_letters + string.digits)


class Refused(Exception):
    """The request is not a click we act on; `status` and `loc` shape the JSON answer."""

    def __init__(self, status: int, loc: list[str | int], message: str) -> None:
        super().__init__(message)
        self.status = status
        self.loc = loc


@dataclass(frozen=True)
class Click:
    """One button press: who pressed which of our buttons, and where to answer."""

    user_id: str
    user_name: str
    team_id: str
    action_id: str
    suggestion_id: int
    response_url: str

    @property
    def actor(self) -> str:
        """How the decision history names the Slack user: "Slack user U0123 (alice)"."""
        return f"Slack user {self.user_id}" + (f" ({self.user_name})" if self.user_name else "")


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """The `X-Slack-Signature` Slack sends for `body` at `timestamp` (version v0)."""
    base = b"v0:" + timestamp.encode("utf-8", "surrogateescape") + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def verify(secret: str, timestamp: str, given: str, body: bytes, now: float) -> None:
    """Raise `Refused` unless `given` is the signature of this exact request and fresh.

    401 for a missing or wrong signature (checked first, in constant time, so nothing
    about the timestamp is told to a forger), 400 for a signed request that is stale.
    """
    if not secret:
        raise Refused(404, ["path"], "Slack buttons are off: SLACK_SIGNING_SECRET is not set.")
    if not given or not timestamp:
        raise Refused(401, ["header", "X-Slack-Signature"], "The request is not signed.")
    expected = signature(secret, timestamp, body).encode()
    if not hmac.compare_digest(expected, given.encode("utf-8", "surrogateescape")):
        raise Refused(401, ["header", "X-Slack-Signature"], "The signature does not match.")
    if not (timestamp.isascii() and timestamp.isdigit()):
        raise Refused(400, ["header", "X-Slack-Request-Timestamp"], "Not a Unix time.")
    if abs(now - int(timestamp)) > WINDOW_SECONDS:
        raise Refused(
            400,
            ["header", "X-Slack-Request-Timestamp"],
            f"The request is more than {WINDOW_SECONDS // 60} minutes old (or ahead).",
        )


def _slack_id(value: Any) -> str:
    """A Slack id (U0123ABC, T0001): letters and digits only, so it is safe to show."""
    if isinstance(value, str) and 0 < len(value) <= 32 and set(value) <= _ID_CHARS:
        return value
    return ""


def _bad(loc: list[str | int], message: str) -> Refused:
    return Refused(400, ["body", "payload", *loc], message)


def parse(body: bytes) -> Click:
    """The click in a signed `block_actions` form body; `Refused` (400) for anything else."""
    try:
        fields = parse_qs(body.decode("utf-8"), strict_parsing=True, max_num_fields=5)
    except (UnicodeDecodeError, ValueError):
        raise _bad([], "Expected a form with one field, payload.") from None
    if len(fields.get("payload", [])) != 1:
        raise _bad([], "Expected a form with one field, payload.")
    try:
        data = json.loads(fields["payload"][0])
    except ValueError:
        raise _bad([], "payload is not JSON.") from None
    if not isinstance(data, dict) or data.get("type") != "block_actions":
        raise _bad(["type"], "Only block_actions (button clicks) are handled here.")
    user = data.get("user")
    user = user if isinstance(user, dict) else {}
    if not (user_id := _slack_id(user.get("id"))):
        raise _bad(["user", "id"], "The click names no Slack user.")
    name = user.get("username") or user.get("name") or ""
    team = data.get("team")
    team = team if isinstance(team, dict) else {}
    actions = data.get("actions")
    action = actions[0] if isinstance(actions, list) and actions else None
    if not isinstance(action, dict) or action.get("action_id") not in (
        ACCEPT_ACTION,
        REJECT_ACTION,
    ):
        raise _bad(["actions", 0, "action_id"], "Not one of Rootcause's buttons.")
    value = action.get("value")
    if not (isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 19):
        raise _bad(["actions", 0, "value"], "The button names no suggestion.")
    response_url = data.get("response_url")
    try:
        validate_webhook_url(response_url if isinstance(response_url, str) else "")
    except WebhookURLNotAllowed:
        raise _bad(["response_url"], "response_url is not a Slack URL.") from None
    return Click(
        user_id=user_id,
        user_name=" ".join(name.split())[:80] if isinstance(name, str) else "",
        team_id=_slack_id(team.get("id")) or _slack_id(user.get("team_id")),
        action_id=str(action["action_id"]),
        suggestion_id=int(value),
        response_url=str(response_url),
    )
