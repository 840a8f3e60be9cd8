"""Slack messages as pure data: Block Kit payloads, escaping, webhook URL checks, answers."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rca.notify.slack import (
    DigestEvent,
    IssueEvent,
    IssueInfo,
    SuggestionInfo,
    TestEvent,
    WebhookURLNotAllowed,
    build_payload,
    classify,
    decided_blocks,
    mask_url,
    parse_retry_after,
    target_of,
    validate_webhook_url,
)

BASE = "https://rootcause.example.com"
ISSUE = IssueInfo(
    id=42,
    title="RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x256 and 512x10)",
    service="ranker",
    model_id="ranker-v3",
    error_type="RuntimeError",
    occurrence_count=17,
)
SUGGESTION = SuggestionInfo(
    action="Reshape the input to (batch, 512) before self.head in model.py",
    reason="The linear layer expects 512 input features but receives 256.",
    runbook_slug="linear-layer-shape-mismatch",
    confidence=0.82,
    validation={
        "format_ok": True,
        "grounded": True,
        "stack_path_match": 1.0,
        "shape_incompatibility": 0.5,
        "unknown_dim_share": 0.0,
        "ok": True,
    },
    provider="offline",
    model="",
)


def _texts(payload: dict) -> str:
    return json.dumps(payload, ensure_ascii=False)


def test_new_issue_message_has_title_service_model_error_count_and_link():
    payload = build_payload(IssueEvent("new_issue", "ML Platform", ISSUE), base_url=BASE)
    blocks = payload["blocks"]
    assert blocks[0]["type"] == "header"
    assert "New issue" in blocks[0]["text"]["text"]
    body = _texts(payload)
    for expected in ("ranker", "ranker-v3", "RuntimeError", "17", "ML Platform"):
        assert expected in body
    assert f"<{BASE}/issues/42|" in body
    assert payload["text"].startswith("New issue in ML Platform: RuntimeError: mat1")
    assert f"{BASE}/issues/42" in payload["text"]


def test_suggestion_message_shows_action_reason_and_validation_badges():
    payload = build_payload(
        IssueEvent("suggestion", "ML Platform", ISSUE, SUGGESTION), base_url=BASE
    )
    sections = [b["text"]["text"] for b in payload["blocks"] if "text" in b]
    assert any(
        s.startswith("*Suggested action*\nReshape the input to (batch, 512)") for s in sections
    )
    assert any(s.startswith("*Reason*\nThe linear layer expects 512") for s in sections)
    badges = payload["blocks"][-2]["elements"][0]["text"]
    for badge in ("✅ validated", "✅ format", "✅ grounded", "✅ stack paths 100%"):
        assert badge in badges
    assert "runbook `linear-layer-shape-mismatch`" in badges
    assert "confidence 0.82" in badges
    assert "by offline" in badges
    assert "Reshape the input" in payload["text"]


def test_failed_checks_show_warning_badges():
    weak = SuggestionInfo(
        action="Check the model",
        reason="Unclear.",
        validation={"ok": False, "grounded": False, "stack_path_match": 0.5},
    )
    payload = build_payload(IssueEvent("suggestion", "p", ISSUE, weak), base_url=BASE)
    badges = payload["blocks"][-2]["elements"][0]["text"]
    assert "⚠️ not validated" in badges
    assert "⚠️ grounded in runbook" in badges
    assert "⚠️ stack paths 50%" in badges


def _actions(payload: dict) -> list[dict]:
    return [b for b in payload["blocks"] if b["type"] == "actions"]


def test_suggestion_has_accept_and_reject_buttons_when_a_signing_secret_is_set(settings):
    settings.SLACK_SIGNING_SECRET = "s3cr3t"
    action = 'Click <https://evil.example|"here"> & "go"'
    hostile = replace(SUGGESTION, id=7, incident_id=9, action=action)
    payload = build_payload(IssueEvent("suggestion", "p", ISSUE, hostile), base_url=BASE)
    [actions] = _actions(payload)
    accept, reject = actions["elements"]
    assert (actions["block_id"], accept["action_id"], reject["action_id"]) == (
        "rca_decision",
        "rca_accept",
        "rca_reject",
    )
    assert accept["value"] == reject["value"] == "7"  # the suggestion's id and nothing else
    assert reject["url"] == f"{BASE}/issues/42?incident=9#suggestion"  # the reason is written there
    assert "evil" not in json.dumps(actions)
    assert payload["blocks"][-1]["type"] == "context"  # the issue link stays last


def test_no_buttons_without_a_signing_secret_or_on_other_messages(settings):
    settings.SLACK_SIGNING_SECRET = ""
    with_id = replace(SUGGESTION, id=7)
    assert not _actions(build_payload(IssueEvent("suggestion", "p", ISSUE, with_id)))
    settings.SLACK_SIGNING_SECRET = "s3cr3t"
    assert not _actions(build_payload(IssueEvent("new_issue", "p", ISSUE)))
    assert not _actions(build_payload(IssueEvent("suggestion", "p", ISSUE, SUGGESTION)))  # no id


def test_a_decided_message_loses_its_buttons_and_says_who_escaped():
    payload = build_payload(
        IssueEvent("suggestion", "p", ISSUE, replace(SUGGESTION, id=7)),
        base_url=BASE,
        interactive=True,
    )
    blocks = decided_blocks(payload["blocks"], "✅ Accepted by <!channel> & co")
    assert not _actions({"blocks": blocks})
    assert blocks[:-1] == [b for b in payload["blocks"] if b["type"] != "actions"]
    assert blocks[-1]["elements"][0]["text"] == "✅ Accepted by &lt;!channel&gt; &amp; co"


def test_regression_has_its_own_header():
    payload = build_payload(IssueEvent("regression", "p", ISSUE), base_url=BASE)
    assert "Regression" in payload["blocks"][0]["text"]["text"]


def test_user_text_cannot_inject_links_or_mentions():
    hostile = IssueInfo(
        id=7,
        title="<!channel> boom & <https://evil.example|click here>",
        service="svc<@U123>",
        error_type="Err>",
    )
    action = SuggestionInfo(action="Run <!here> & pray", reason="a < b > c")
    payload = build_payload(IssueEvent("suggestion", "<!everyone>", hostile, action), base_url=BASE)
    body = _texts(payload)
    for raw in ("<!channel>", "<!here>", "<!everyone>", "<@U123>", "<https://evil"):
        assert raw not in body
    assert "&lt;!channel&gt; boom &amp; &lt;https[:]//evil[.]example|click here&gt;" in body
    assert "Run &lt;!here&gt; &amp; pray" in body
    # the only links left are ours
    assert body.count("<https://") == body.count(f"<{BASE}/")


def test_long_text_is_clipped_without_splitting_an_entity():
    long = IssueInfo(id=1, title="&" * 1000)
    payload = build_payload(IssueEvent("new_issue", "p", long), base_url=BASE)
    title_block = payload["blocks"][1]["text"]["text"]
    title = title_block.split("|", 1)[1].split(">*", 1)[0]
    assert title.endswith("&amp;…")
    assert len(title) <= 300


def test_digest_lists_issues_and_counts_the_rest():
    issues = tuple(
        IssueInfo(id=i, title=f"Error {i}", service="svc", error_type="ValueError")
        for i in range(1, 46)
    )
    payload = build_payload(DigestEvent("ML Platform", issues, 5), base_url=BASE)
    body = _texts(payload)
    assert "45" in payload["blocks"][0]["text"]["text"]
    assert f"<{BASE}/issues/1|Error 1>" in body
    assert f"<{BASE}/issues/20|Error 20>" in body
    assert f"<{BASE}/issues/21|" not in body
    assert "…and 25 more" in body
    assert "45 more new issues in ML Platform within 5 minutes" in payload["text"]
    assert all(len(b["text"]["text"]) <= 3000 for b in payload["blocks"] if b["type"] == "section")


def test_test_message_names_the_project():
    payload = build_payload(TestEvent("A & B"), base_url=BASE)
    assert "A &amp; B" in payload["text"]
    assert payload["blocks"][0]["type"] == "header"


def test_link_uses_configured_base_url(settings):
    settings.RCA_BASE_URL = "https://rc.internal"
    payload = build_payload(IssueEvent("new_issue", "p", ISSUE))
    assert "<https://rc.internal/issues/42|" in _texts(payload)


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
        "https://hooks.slack.com/workflows/T000/A000/123/abc",
        "  https://HOOKS.SLACK.COM/services/T000/B000/XXXXXXXX  ",
    ],
)
def test_slack_webhook_urls_are_accepted(url, settings):
    settings.RCA_WEBHOOK_ALLOWED_HOSTS = []
    validate_webhook_url(url)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://hooks.slack.com/services/T/B/X", "https://"),
        ("https://hooks.slack.com/", "no webhook path"),
        ("https://evil.example.com/services/T/B/X", "evil.example.com is not allowed"),
        ("https://hooks.slack.com.evil.example/services/T/B/X", "is not allowed"),
        ("http://127.0.0.1:8080/hook", "127.0.0.1 is not allowed"),
        ("https://user:pw@hooks.slack.com/services/T/B/X", "user name or password"),
        ("ftp://hooks.slack.com/services/T/B/X", "hooks.slack.com/services"),
        ("not a url", "hooks.slack.com/services"),
        ("https://hooks.slack.com:99999/services/T/B/X", "not a valid URL"),
    ],
)
def test_other_urls_are_refused_with_a_clear_message(url, says, settings):
    settings.RCA_WEBHOOK_ALLOWED_HOSTS = []
    with pytest.raises(WebhookURLNotAllowed, match=says) as refused:
        validate_webhook_url(url)
    assert isinstance(refused.value, ValueError)
    assert "/services/T/B/X" not in str(refused.value)  # the secret part is never echoed


def test_allowed_hosts_may_use_plain_http(settings):
    settings.RCA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    validate_webhook_url("http://127.0.0.1:8080/hook")
    with pytest.raises(WebhookURLNotAllowed):
        validate_webhook_url("http://10.0.0.1/hook")


def test_urls_are_masked_and_hashed_never_kept_whole():
    url = "https://hooks.slack.com/services/T000/B000/abcdWXYZ"
    assert mask_url(url) == "hooks.slack.com/…WXYZ"
    assert target_of(url) == target_of(f" {url} ")
    assert len(target_of(url)) == 64 and "hooks" not in target_of(url)


@pytest.mark.parametrize(
    ("status", "body", "permanent"),
    [
        (404, "no_service", True),
        (410, "channel_is_archived", True),
        (403, "invalid_token", True),
        (404, "channel_not_found", True),
        (400, "invalid_payload", True),
        (302, "", True),
        (429, "rate_limited", False),
        (500, "", False),
        (503, "service unavailable", False),
    ],
)
def test_slack_answers_are_classified(status, body, permanent):
    error = classify(status, body, "3" if status == 429 else None)
    assert error is not None
    assert error.permanent is permanent
    assert error.status == status
    if body:
        assert body in str(error)


def test_success_is_not_an_error():
    assert classify(200, "ok") is None


def test_retry_after_in_seconds_or_as_a_date():
    assert classify(429, "rate_limited", "7").retry_after == 7.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_backoff_doubles_and_honours_retry_after(settings):
    from rca.notify import backoff

    settings.RCA_SLACK_BACKOFF_SECONDS = 2.0
    assert [backoff(n) for n in (1, 2, 3, 4)] == [2.0, 4.0, 8.0, 16.0]
    assert backoff(1, retry_after=30) == 30
    assert backoff(3, retry_after=1) == 8.0
    assert backoff(30) == 3600.0
