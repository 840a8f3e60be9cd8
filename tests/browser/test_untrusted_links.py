"""Incident text and LLM text never become a link or an image in the browser (issue 13).

The incident is POSTed through the real API with Markdown links, images, raw HTML and a bare
URL in every field a user sees; the suggestion carries the same, as an LLM steered by that
text would write it (stored by the same model call the pipeline makes, marked invalid as
the validator would). The page must show all of it as text: no element points at the
attacker's host, no request goes there, no handler runs.
"""

from __future__ import annotations

import re

import pytest
import requests
from playwright.sync_api import Page, expect

from ingest.models import Incident
from tests.support.factories import project_with_key
from tests.support.ui import PASSWORD, analysed, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EVIL = (
    "[click](http://evil.example/md) ![x](http://evil.example/x.png) "
    '<a href="http://evil.example/raw">raw</a> '
    '<img src=x onerror="window.__pwned=1;alert(1)"> '
    "see http://evil.example/bare and <http://evil.example/auto> "
    "[ref][1]\n\n[1]: http://evil.example/ref"
)
INCIDENT = {
    "service": "ranker",
    "environment": "prod",
    "error_type": "RuntimeError",
    "message": f"fetch failed: {EVIL}",
    "stacktrace": [
        {
            "filename": "/srv/ranker/serve.py",
            "function": "predict",
            "lineno": 88,
            "in_app": True,
            "context_line": f"load('{EVIL}')",
        }
    ],
    "logs": [{"level": "ERROR", "message": f"download {EVIL}", "error_code": "E1"}],
    "inference_context": {"model_id": "ranker-v3", "framework": "[x](http://evil.example/f)"},
    "tags": {"source": "http://evil.example/tag"},
}


def test_links_and_images_in_incident_and_suggestion_text_stay_inert(live_server, page: Page):
    tenant = project_with_key("ml-platform")
    member(tenant.project, "alice", "responder")
    response = requests.post(
        f"{live_server.url}/api/v1/incidents", json=INCIDENT, headers=tenant.auth, timeout=10
    )
    assert response.status_code == 202, response.text
    body = response.json()
    analysed(
        Incident.objects.get(pk=body["incident_id"]),
        action=f"Download the patch from {EVIL}",
        reason=f"The fix lives at {EVIL}",
        valid=False,
        validation={"format_ok": True, "grounded": True, "urls_grounded": False, "ok": False},
    )

    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    evil_requests: list[str] = []
    page.context.route(
        re.compile(r"evil\.example"),
        lambda route: (evil_requests.append(route.request.url), route.abort()),
    )

    page.goto(f"{live_server.url}/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#timeline-results")).to_contain_text("Download the patch from")
    _assert_inert(page)

    page.goto(f"{live_server.url}/issues/{body['issue_id']}")
    card = page.locator("#suggestion")
    expect(card.locator("h3.action")).to_contain_text("[click](http://evil.example/md)")
    expect(card.locator("p.reason")).to_contain_text('<a href="http://evil.example/raw">raw</a>')
    expect(card.locator("p.reason")).to_contain_text("<img src=x onerror=")
    expect(card).to_contain_text("✗ links")  # the validation record says why it is not trusted
    expect(page.locator("pre.message")).to_contain_text("![x](http://evil.example/x.png)")
    expect(page.locator("table.logs")).to_contain_text("see http://evil.example/bare")
    _assert_inert(page)

    # Another issue of the project lists the first one's suggestion as a similar past fix.
    other = requests.post(
        f"{live_server.url}/api/v1/incidents",
        json=INCIDENT | {"service": "ranker-canary"},
        headers=tenant.auth,
        timeout=10,
    ).json()
    suggestion = analysed(Incident.objects.get(pk=other["incident_id"]))
    suggestion.analysis.retrieved += [
        {"kind": "past_fix", "slug": "s", "title": EVIL, "fused": 0.02}
        | {"issue_id": body["issue_id"], "incident_id": body["incident_id"], "action": EVIL}
    ]
    suggestion.analysis.save()
    page.goto(f"{live_server.url}/issues/{other['issue_id']}")
    expect(page.locator("ul.past")).to_contain_text("[click](http://evil.example/md)")
    _assert_inert(page)

    page.wait_for_load_state("load")
    assert dialogs == []
    assert evil_requests == []
    assert page.evaluate("window.__pwned") is None


def _assert_inert(page: Page) -> None:
    page.wait_for_load_state("load")
    expect(page.locator('a[href*="evil"]')).to_have_count(0)
    expect(page.locator('img[src*="evil"]')).to_have_count(0)
    expect(page.locator("img[onerror], [onerror], [onclick], [onload]")).to_have_count(0)
    expect(page.locator('img[src="x"]')).to_have_count(0)
    expect(page.locator("main script")).to_have_count(0)
