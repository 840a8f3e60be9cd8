"""Block Kit payloads: the JSON body Slack expects for each kind of event.

Pure functions of an event (and the base URL for links), so every message can be checked
without a network or a database. User text is escaped and clipped here, so it can neither
form links or mentions nor make Slack reject a block.

Incident text and LLM text never become a link (issue 13): `&`, `<`, `>` are escaped as
Slack's formatting reference asks, so no `<url|text>` or mention can be formed; every mrkdwn
text object is sent with `verbatim: true`, which Slack documents as turning off the automatic
conversion of URLs into links (our own `<url|label>` links still work); URLs in user text are
also defanged (`http[:]//evil[.]example`) because the top-level `text` fallback has no
`verbatim` switch; and `unfurl_links`/`unfurl_media` are off, so Slack never fetches them.
Only links to our own base URL are made, by this module.
"""

from __future__ import annotations

from typing import Any, NotRequired, Required, TypedDict

from django.conf import settings

from ingest.linear_regex import compile as linear
from ingest.scrubbing import scrub_text
from rca.notify.slack.events import DigestEvent, Event, IssueEvent, SuggestionInfo, TestEvent
from rca.suggestion.validation import MAX_UNKNOWN_DIM_SHARE, MIN_STACK_PATH_MATCH

# Slack's documented limits: section text 3000, a field 2000. User text is clipped far
# below them, so no block is ever rejected for its length.
SECTION_LIMIT = 3000
FIELD_LIMIT = 2000
DIGEST_LISTED = 20  # issues named in a digest; the rest are counted

# The Accept / Reject buttons on a suggestion message: fixed ids, and a value that is the
# suggestion's pk and nothing else, so no user text ever reaches an id or a value.
DECISION_BLOCK = "rca_decision"
ACCEPT_ACTION = "rca_accept"
REJECT_ACTION = "rca_reject"

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


class TextObject(TypedDict):
    """Block Kit text: ``mrkdwn`` (with ``verbatim``) or ``plain_text`` (with ``emoji``)."""

    type: str
    text: str
    verbatim: NotRequired[bool]
    emoji: NotRequired[bool]


class Button(TypedDict):
    """A Block Kit button; ``url`` makes Slack open that page as well as tell us."""

    type: str
    action_id: str
    value: str
    text: TextObject
    style: NotRequired[str]
    url: NotRequired[str]


class Block(TypedDict, total=False):
    """The blocks we send: header and section carry ``text`` (a section may carry
    ``fields`` instead), context carries text ``elements``, actions carries buttons."""

    type: Required[str]
    block_id: str
    text: TextObject
    fields: list[TextObject]
    elements: list[TextObject | Button]


class SlackPayload(TypedDict):
    """The webhook body; ``text`` is the fallback notifications show."""

    text: str
    blocks: list[Block]
    unfurl_links: NotRequired[bool]
    unfurl_media: NotRequired[bool]


def escape(text: Any) -> str:
    """Slack's three control characters, so user text cannot form links or mentions."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(text))


# A scheme URL's "scheme://host" part, and a "www." host without a scheme. No word boundary
# is required: `_http://evil.example_` (italics in mrkdwn) must be defanged too.
_SCHEME_URL = linear(r"([a-z][a-z0-9+.-]{0,30}):/{2,}([^\s/?#<>|\\]*)", ignore_case=True)
_WWW_HOST = linear(r"www\.", ignore_case=True)


def defang(text: str) -> str:
    """Break URLs in untrusted text so no client can link them; a reader still sees them.

    ``http://evil.example/x`` becomes ``http[:]//evil[.]example/x`` (the usual way to quote
    an indicator of compromise), ``www.evil.example`` becomes ``www[.]evil.example``.
    """
    text = _SCHEME_URL.sub(lambda m: f"{m[1]}[:]//{m[2].replace('.', '[.]')}", text)
    return _WWW_HOST.sub(lambda m: m[0][:-1] + "[.]", text)


def _clip(text: Any, limit: int) -> str:
    """Scrub, defang, escape and cut to `limit` characters without splitting an entity."""
    text = scrub_text(" ".join(str(text).split()))
    # Each input char gives one or more output chars: the rest can only be clipped away.
    pieces = [_ESCAPES.get(ch, ch) for ch in defang(text[: limit + 1])]
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


def _mrkdwn(text: str) -> TextObject:
    """A mrkdwn text object; `verbatim` stops Slack from turning bare URLs into links."""
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def _header(text: str) -> Block:
    return {"type": "header", "text": {"type": "plain_text", "text": text, "emoji": True}}


def _section(text: str) -> Block:
    return {"type": "section", "text": _mrkdwn(text[:SECTION_LIMIT])}


def _context(text: str) -> Block:
    return {"type": "context", "elements": [_mrkdwn(text[:SECTION_LIMIT])]}


def _button(action_id: str, label: str, suggestion_id: int, style: str, url: str = "") -> Button:
    button: Button = {
        "type": "button",
        "action_id": action_id,
        "value": str(int(suggestion_id)),
        "text": {"type": "plain_text", "text": label, "emoji": True},
        "style": style,
    }
    if url:
        button["url"] = url
    return button


def suggestion_url(issue_id: int, incident_id: int = 0, base_url: str | None = None) -> str:
    """The issue page showing the occurrence a suggestion was written for, at the suggestion."""
    occurrence = f"?incident={int(incident_id)}" if incident_id else ""
    return f"{issue_url(issue_id, base_url)}{occurrence}#suggestion"


def decision_block(
    suggestion_id: int, issue_id: int, incident_id: int = 0, base_url: str | None = None
) -> Block:
    """Accept decides from Slack; Reject opens the issue page, where the reason is written
    (a button cannot carry a note, and a rejection without one is never recorded)."""
    page = suggestion_url(issue_id, incident_id, base_url)
    return {
        "type": "actions",
        "block_id": DECISION_BLOCK,
        "elements": [
            _button(ACCEPT_ACTION, "Accept", suggestion_id, "primary"),
            _button(REJECT_ACTION, "Reject…", suggestion_id, "danger", page),
        ],
    }


def decided_blocks(blocks: list[Block], line: str) -> list[Block]:
    """The message after a decision: its blocks without the buttons, and `line` (escaped
    here) as a context line at the end, e.g. "✅ Accepted by alice"."""
    kept = [b for b in blocks if b.get("block_id") != DECISION_BLOCK]
    return [*kept, _context(_clip(line, 300))]


def _field(label: str, value: str) -> TextObject:
    return _mrkdwn(f"*{label}*\n{value}"[:FIELD_LIMIT])


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
    if "urls_grounded" in validation:
        badges.append(f"{_mark(bool(validation['urls_grounded']))} links from runbook")
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


def _abstention_section(s: SuggestionInfo) -> Block:
    """An abstention: no action to apply, the closest runbooks by title (corpus text, not
    incident text) and the evidence that would help. The best guess is on the issue page."""
    lines = ["Rootcause has no confident suggestion for this issue (the evidence is weak)."]
    if s.closest:
        lines.append("*Closest runbooks:* " + "; ".join(_clip(t, 120) for t in s.closest[:3]))
    if s.wanted:
        lines.append("*What would help:* " + "; ".join(_clip(w, 160) for w in s.wanted[:3]))
    return _section("\n".join(lines))


def _issue_payload(event: IssueEvent, base_url: str | None, interactive: bool) -> SlackPayload:
    issue, url = event.issue, issue_url(event.issue.id, base_url)
    title = _clip(issue.title or issue.error_type or f"Issue {issue.id}", 300)
    fields = [
        _field("Service", _clip(issue.service or "—", 200)),
        _field("Model", _clip(issue.model_id or "—", 200)),
        _field("Error type", _clip(issue.error_type or "—", 200)),
        _field("Occurrences", str(issue.occurrence_count)),
    ]
    blocks: list[Block] = [
        _header(_HEADERS[event.kind]),
        _section(f"*<{url}|{title}>*\nin project *{_clip(event.project, 200)}*"),
        {"type": "section", "fields": fields},
    ]
    verb = {"new_issue": "New issue", "regression": "Regression", "suggestion": "Suggested fix"}
    text = f"{verb[event.kind]} in {_clip(event.project, 100)}: {title}"
    if (s := event.suggestion) is not None and s.abstained:
        blocks[0] = _header("🤔 No confident suggestion")
        blocks.append(_abstention_section(s))
        facts = [f"confidence {s.confidence:.2f}", f"by {_clip(s.provider or 'unknown', 100)}"]
        blocks.append(_context(" · ".join(facts)))
        text = f"No confident suggestion in {_clip(event.project, 100)}: {title}"
    elif s is not None:
        blocks.append(_section(f"*Suggested action*\n{_clip(s.action, 1000)}"))
        blocks.append(_section(f"*Reason*\n{_clip(s.reason, 1500)}"))
        facts = validation_badges(s.validation)
        if s.runbook_slug:
            facts.append(f"runbook `{_clip(s.runbook_slug, 120)}`")
        facts.append(f"confidence {s.confidence:.2f}")
        by = _clip(f"{s.provider} {s.model}".strip() or "unknown", 200)
        facts.append(f"by {by}")
        blocks.append(_context(" · ".join(facts)))
        if interactive and s.id:
            blocks.append(decision_block(s.id, issue.id, s.incident_id, base_url))
        text += f" -> {_clip(s.action, 300)}"
    blocks.append(_context(f"<{url}|Open issue #{issue.id} in Rootcause>"))
    return {"text": f"{text} {url}", "blocks": blocks}


def _digest_payload(event: DigestEvent, base_url: str | None) -> SlackPayload:
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


def _test_payload(event: TestEvent, base_url: str | None) -> SlackPayload:
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


def build_payload(
    event: Event, *, base_url: str | None = None, interactive: bool | None = None
) -> SlackPayload:
    """The JSON body for Slack: Block Kit `blocks` plus the plain `text` notifications show.

    Every piece of user text is defanged and escaped; only our own links are raw, and
    Slack is told not to unfurl (fetch and preview) any URL in the message. A suggestion
    gets Accept / Reject buttons when `interactive` (default: a SLACK_SIGNING_SECRET is
    set, without which Slack's clicks could not be verified, so they are not offered).
    """
    if interactive is None:
        interactive = bool(settings.SLACK_SIGNING_SECRET)
    if isinstance(event, IssueEvent):
        payload = _issue_payload(event, base_url, interactive)
    elif isinstance(event, DigestEvent):
        payload = _digest_payload(event, base_url)
    else:
        payload = _test_payload(event, base_url)
    return {**payload, "unfurl_links": False, "unfurl_media": False}
