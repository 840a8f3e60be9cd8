"""Slack incoming webhooks: a pure Block Kit payload builder, URL checks, and one sender.

`build_payload()` turns an event (plain data, no ORM) into the JSON Slack expects;
`send()` posts it and raises `SlackError` -- the only error it raises -- saying whether
trying again can help. Whoever calls `send()` records the attempt (see `rca.notify`).

Webhook URLs are secrets (whoever holds one can post to the channel): they are stored on
the project, hashed in `Notification.target`, and never logged -- only `mask_url()`.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from rca.validation import MAX_UNKNOWN_DIM_SHARE, MIN_STACK_PATH_MATCH

log = logging.getLogger(__name__)

SLACK_HOST = "hooks.slack.com"
# Slack's documented limits: section text 3000, a field 2000. User text is clipped far
# below them, so no block is ever rejected for its length.
SECTION_LIMIT = 3000
FIELD_LIMIT = 2000
DIGEST_LISTED = 20  # issues named in a digest; the rest are counted

# --- events: what a message is about ----------------------------------------------------


@dataclass(frozen=True)
class IssueInfo:
    id: int
    title: str
    service: str = ""
    model_id: str = ""
    error_type: str = ""
    occurrence_count: int = 0


@dataclass(frozen=True)
class SuggestionInfo:
    action: str
    reason: str
    runbook_slug: str = ""
    confidence: float = 0.0
    validation: dict[str, Any] = field(default_factory=dict)
    provider: str = ""
    model: str = ""


@dataclass(frozen=True)
class IssueEvent:
    """A new issue, a regression, or a suggestion ready for an issue."""

    kind: str  # new_issue | regression | suggestion
    project: str
    issue: IssueInfo
    suggestion: SuggestionInfo | None = None


@dataclass(frozen=True)
class DigestEvent:
    """New issues folded into one message because they arrived in a storm."""

    project: str
    issues: tuple[IssueInfo, ...]
    window_minutes: float


@dataclass(frozen=True)
class TestEvent:
    """The settings page's "send test message"."""

    __test__ = False  # not a pytest test class, despite the name
    project: str


Event = IssueEvent | DigestEvent | TestEvent


# --- URLs ---------------------------------------------------------------------------------


class WebhookURLNotAllowed(ValueError):
    """The URL is not a Slack incoming webhook (nor on RCA_WEBHOOK_ALLOWED_HOSTS)."""


def validate_webhook_url(url: str) -> None:
    """Accept `https://hooks.slack.com/...`, or any http(s) URL on an allowed host.

    The message names the host, never the URL (its path is the secret).
    """
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
    """`hooks.slack.com/…WXYZ`: enough to tell webhooks apart, too little to use one."""
    try:
        host = urlsplit(url).hostname or "?"
    except ValueError:
        host = "?"
    return f"{host}/…{url.rstrip('/')[-4:]}"


def target_of(url: str) -> str:
    """What `Notification.target` stores: a hash, so the table never holds the secret."""
    return hashlib.sha256(url.strip().encode()).hexdigest()


# --- payloads -----------------------------------------------------------------------------

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def escape(text: Any) -> str:
    """Slack's three control characters, so user text cannot form links or mentions."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(text))


def _clip(text: Any, limit: int) -> str:
    """Escape and cut to `limit` characters without splitting an entity."""
    pieces = [_ESCAPES.get(ch, ch) for ch in " ".join(str(text).split())]
    if sum(map(len, pieces)) <= limit:
        return "".join(pieces)
    out, size = [], 0
    for piece in pieces:
        if size + len(piece) > limit - 1:
            break
        out.append(piece)
        size += len(piece)
    return "".join(out) + "…"


def issue_url(issue_id: int, base_url: str | None = None) -> str:
    return f"{(base_url or settings.RCA_BASE_URL).rstrip('/')}/issues/{issue_id}"


def _header(text: str) -> dict:
    return {"type": "header", "text": {"type": "plain_text", "text": text, "emoji": True}}


def _section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}}


def _context(text: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:SECTION_LIMIT]}]}


def _field(label: str, value: str) -> dict:
    return {"type": "mrkdwn", "text": f"*{label}*\n{value}"[:FIELD_LIMIT]}


def _mark(passed: bool) -> str:
    return "✅" if passed else "⚠️"


def validation_badges(validation: dict[str, Any]) -> list[str]:
    """One badge per check the validator recorded; checks it did not record are skipped."""
    badges = []
    if "ok" in validation:
        badges.append("✅ validated" if validation["ok"] else "⚠️ not validated")
    if "format_ok" in validation:
        badges.append(f"{_mark(bool(validation['format_ok']))} format")
    if "grounded" in validation:
        badges.append(f"{_mark(bool(validation['grounded']))} grounded in runbook")
    if isinstance(validation.get("stack_path_match"), int | float):
        share = float(validation["stack_path_match"])
        badges.append(f"{_mark(share >= MIN_STACK_PATH_MATCH)} stack paths {share:.0%}")
    if isinstance(validation.get("unknown_dim_share"), int | float):
        share = float(validation["unknown_dim_share"])
        badges.append(f"{_mark(share <= MAX_UNKNOWN_DIM_SHARE)} unknown dims {share:.0%}")
    if isinstance(validation.get("shape_incompatibility"), int | float):
        badges.append(f"shape incompatibility {float(validation['shape_incompatibility']):.2f}")
    return badges


_HEADERS = {
    "new_issue": "🆕 New issue",
    "regression": "🔁 Regression: a resolved issue is back",
    "suggestion": "💡 Suggested fix",
}


def _issue_payload(event: IssueEvent, base_url: str | None) -> dict:
    issue, url = event.issue, issue_url(event.issue.id, base_url)
    title = _clip(issue.title or issue.error_type or f"Issue {issue.id}", 300)
    fields = [
        _field("Service", _clip(issue.service or "—", 200)),
        _field("Model", _clip(issue.model_id or "—", 200)),
        _field("Error type", _clip(issue.error_type or "—", 200)),
        _field("Occurrences", str(issue.occurrence_count)),
    ]
    blocks = [
        _header(_HEADERS[event.kind]),
        _section(f"*<{url}|{title}>*\nin project *{_clip(event.project, 200)}*"),
        {"type": "section", "fields": fields},
    ]
    verb = {"new_issue": "New issue", "regression": "Regression", "suggestion": "Suggested fix"}
    text = f"{verb[event.kind]} in {_clip(event.project, 100)}: {title}"
    if (s := event.suggestion) is not None:
        blocks.append(_section(f"*Suggested action*\n{_clip(s.action, 1000)}"))
        blocks.append(_section(f"*Reason*\n{_clip(s.reason, 1500)}"))
        facts = validation_badges(s.validation)
        if s.runbook_slug:
            facts.append(f"runbook `{_clip(s.runbook_slug, 120)}`")
        facts.append(f"confidence {s.confidence:.2f}")
        by = _clip(f"{s.provider} {s.model}".strip() or "unknown", 200)
        facts.append(f"by {by}")
        blocks.append(_context(" · ".join(facts)))
        text += f" -> {_clip(s.action, 300)}"
    blocks.append(_context(f"<{url}|Open issue #{issue.id} in Rootcause>"))
    return {"text": f"{text} {url}", "blocks": blocks}


def _digest_payload(event: DigestEvent, base_url: str | None) -> dict:
    count, window = len(event.issues), f"{event.window_minutes:g}"
    project = _clip(event.project, 200)
    lines: list[str] = []
    budget = SECTION_LIMIT - 40  # room for the "and N more" line
    for issue in event.issues[:DIGEST_LISTED]:
        detail = " · ".join(_clip(v, 80) for v in (issue.service, issue.error_type) if v)
        line = f"• <{issue_url(issue.id, base_url)}|{_clip(issue.title, 120)}>"
        line = f"{line} — {detail}" if detail else line
        if len(line) + 1 > budget:
            break
        lines.append(line)
        budget -= len(line) + 1
    if count > len(lines):
        lines.append(f"…and {count - len(lines)} more")
    timeline = f"{(base_url or settings.RCA_BASE_URL).rstrip('/')}/"
    blocks = [
        _header(f"🌩️ {count} more new issues"),
        _section(
            f"*{count}* further new issues appeared in project *{project}* within "
            f"{window} minutes; they are listed here instead of one message each."
        ),
        _section("\n".join(lines)),
        _context(f"<{timeline}|Open the timeline in Rootcause>"),
    ]
    text = f"{count} more new issues in {project} within {window} minutes {timeline}"
    return {"text": text, "blocks": blocks}


def _test_payload(event: TestEvent, base_url: str | None) -> dict:
    project = _clip(event.project, 200)
    home = f"{(base_url or settings.RCA_BASE_URL).rstrip('/')}/"
    return {
        "text": f"Rootcause test message for {project}: notifications will arrive here.",
        "blocks": [
            _header("✅ Rootcause is connected"),
            _section(
                f"Notifications for project *{project}* (new issues, suggested fixes, "
                f"regressions) will arrive in this channel. <{home}|Open Rootcause>"
            ),
        ],
    }


def build_payload(event: Event, *, base_url: str | None = None) -> dict:
    """The JSON body for Slack: Block Kit `blocks` plus the plain `text` notifications show.

    Every piece of user text goes through `escape()`; only our own links are raw.
    """
    if isinstance(event, IssueEvent):
        return _issue_payload(event, base_url)
    if isinstance(event, DigestEvent):
        return _digest_payload(event, base_url)
    return _test_payload(event, base_url)


# --- sending ------------------------------------------------------------------------------


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


def send(url: str, payload: dict, timeout: float | None = None) -> None:
    """POST `payload` to the webhook once; return on success, raise `SlackError` otherwise."""
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
