"""Text leaving for the LLM provider or Slack is scrubbed again at the boundary.

Stored text is scrubbed at ingest; these boundaries scrub once more, so a secret that
reached a row some other way (an older row, ``RCA_SCRUB=false`` at the time, a runbook)
still never reaches a third party.
"""

from __future__ import annotations

import json

from rca.notify.slack import IssueEvent, IssueInfo, SuggestionInfo, build_payload
from rca.suggestion.prompts import untrusted
from tests.support.secret_samples import OPENAI_KEY, SECRETS, SLACK_TOKEN


def test_text_fenced_for_the_provider_carries_no_secret():
    text = f"openai.AuthenticationError: key {OPENAI_KEY}\nDB_PASSWORD=hunter2 at db:5432"
    fenced = untrusted("incident", text)
    assert OPENAI_KEY not in fenced and "hunter2" not in fenced
    assert "[redacted:openai_key]" in fenced and "DB_PASSWORD=[redacted:password]" in fenced
    assert "openai.AuthenticationError" in fenced


def test_a_slack_message_carries_no_secret():
    issue = IssueInfo(
        id=7,
        title=f"SlackApiError: invalid_auth for {SLACK_TOKEN}",
        service="notifier",
        error_type="slack_sdk.errors.SlackApiError",
        occurrence_count=2,
    )
    suggestion = SuggestionInfo(
        action=f"Rotate the key {SECRETS['rootcause']} in project settings",
        reason="The key in redis://:r3dis-Pass@cache:6379 was revoked.",
    )
    payload = json.dumps(
        build_payload(
            IssueEvent("suggestion", "ops", issue, suggestion), base_url="https://rc.example"
        )
    )
    for secret in (SLACK_TOKEN, SECRETS["rootcause"], "r3dis-Pass"):
        assert secret not in payload
    assert "slack_sdk.errors.SlackApiError" in payload
    assert "[redacted:slack_token]" in payload and "[redacted:rootcause_key]" in payload
