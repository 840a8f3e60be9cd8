"""Slack messages never turn incident or LLM text into a link (issue 13).

Slack's formatting reference: `&`, `<`, `>` are control characters and must be escaped;
a mrkdwn text object with `verbatim: true` is not auto-linked. URLs in user text are also
defanged for the top-level `text` fallback, which has no `verbatim` switch.
"""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from rca.notify.slack import DigestEvent, IssueEvent, IssueInfo, SuggestionInfo, build_payload
from rca.notify.slack.payloads import defang

BASE = "https://rootcause.example.com"
HOSTILE = "boom <http://evil.example|click me> & http://evil.example/x.png www.evil.example"
ISSUE = IssueInfo(id=7, title=HOSTILE, service="svc <https://evil.example>", error_type="E>")
SUGGESTION = SuggestionInfo(
    action="Download the fix from https://evil.example/fix.sh & run it",
    reason="See <https://evil.example/why|the docs> > details",
    runbook_slug="x<y>",
    validation={"ok": False, "urls_grounded": False},
)


def _payloads() -> list[dict]:
    return [
        build_payload(
            IssueEvent(kind, "proj <http://evil.example>", ISSUE, SUGGESTION), base_url=BASE
        )
        for kind in ("new_issue", "regression", "suggestion")
    ] + [build_payload(DigestEvent("proj", [ISSUE, ISSUE], 5.0), base_url=BASE)]


def _text_objects(node) -> list[dict]:
    if isinstance(node, dict):
        found = [node] if node.get("type") in ("mrkdwn", "plain_text") else []
        return found + [t for v in node.values() for t in _text_objects(v)]
    if isinstance(node, list):
        return [t for v in node for t in _text_objects(v)]
    return []


def test_untrusted_text_forms_no_slack_link():
    for payload in _payloads():
        body = json.dumps(payload, ensure_ascii=False)
        links = re.findall(r"<([^>|]*)", body)  # every <target|label> or <target> Slack sees
        assert links, "our own link to the issue is still there"
        assert all(link.startswith(f"{BASE}/") for link in links), links


def test_control_characters_of_untrusted_text_are_escaped():
    payload = build_payload(IssueEvent("suggestion", "p", ISSUE, SUGGESTION), base_url=BASE)
    body = json.dumps(payload, ensure_ascii=False)
    assert "boom &lt;http[:]//evil[.]example|click me&gt; &amp; " in body
    assert "See &lt;https[:]//evil[.]example/why|the docs&gt; &gt; details" in body
    assert "runbook `x&lt;y&gt;`" in body


def test_no_untrusted_url_survives_in_a_form_a_client_could_link():
    for payload in _payloads():
        body = json.dumps(payload, ensure_ascii=False)
        assert "://evil" not in body and "www.evil" not in body  # defanged: [:]// and www[.]
        assert "evil[.]example" in body  # still readable


def test_every_mrkdwn_object_is_verbatim_and_nothing_unfurls():
    for payload in _payloads():
        assert payload["unfurl_links"] is False
        assert payload["unfurl_media"] is False
        for obj in _text_objects(payload["blocks"]):
            if obj["type"] == "mrkdwn":
                assert obj["verbatim"] is True, obj


def test_our_own_issue_link_is_still_a_link():
    payload = build_payload(IssueEvent("new_issue", "p", ISSUE), base_url=BASE)
    assert f"<{BASE}/issues/7|" in json.dumps(payload)


def test_defang_keeps_text_readable_and_leaves_non_urls_alone():
    assert defang("get http://evil.example/a.b?c=d.e") == "get http[:]//evil[.]example/a.b?c=d.e"
    assert defang("WWW.evil.example") == "WWW[.]evil.example"
    assert defang("torch.nn.Linear in model.py:12") == "torch.nn.Linear in model.py:12"


@given(st.text(alphabet=st.sampled_from(list("htps:/.wW_*~`<>|&ex1 -")), max_size=60))
def test_no_text_keeps_a_scheme_url_or_www_host_after_defanging(text: str):
    out = defang(text)
    assert not re.search(r"(?i)[a-z]://", out)
    assert "www." not in out.lower()


def test_urls_inside_mrkdwn_markers_are_defanged_too():
    assert defang("_http://evil.example_") == "_http[:]//evil[.]example_"
    assert defang("*www.evil.example*") == "*www[.]evil.example*"
