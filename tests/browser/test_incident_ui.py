"""The on-call engineer's path through the UI, in a real browser over real HTTP.

The incidents are POSTed to the real API; the suggestion comes from the real worker
running the pipeline; the page learns about it by htmx polling, without a reload.
"""

from __future__ import annotations

import re

import pytest
import requests
from playwright.sync_api import Page, expect

from ingest.models import Incident
from rca.models import Decision, Suggestion
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import PASSWORD, analysed, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OOM = {
    "service": "chat",
    "environment": "prod",
    "error_type": "torch.OutOfMemoryError",
    "message": "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 39.59 GiB total)",
    "inference_context": {"model_id": "llama-8b", "batch_size": 64},
}


def post(live_server, tenant, payload: dict) -> dict:
    response = requests.post(
        f"{live_server.url}/api/v1/incidents", json=payload, headers=tenant.auth, timeout=10
    )
    assert response.status_code == 202, response.text
    return response.json()


def log_in(page: Page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{live_server.url}/")


@pytest.fixture
def corpus():
    """The bundled runbooks, embedded, as `make run` prepares them for the worker."""
    from tests.support.corpus import store_embedded_runbooks

    store_embedded_runbooks()


def test_responder_finds_opens_and_accepts_a_live_suggestion(
    live_server, page: Page, celery_worker, corpus, tmp_path
):
    tenant = project_with_key("ml-platform")
    member(tenant.project, "alice", "responder")
    post(live_server, tenant, OOM)
    body = post(live_server, tenant, shape_error(batch=4))

    log_in(page, live_server, "alice")
    results = page.locator("#timeline-results")
    expect(results.get_by_role("link", name="RuntimeError")).to_be_visible()
    expect(results).to_contain_text("torch.OutOfMemoryError")

    page.get_by_label("Service").select_option("ranker")  # narrows live, URL shareable
    expect(page).to_have_url(re.compile(r"[?&]service=ranker"))
    expect(results).not_to_contain_text("torch.OutOfMemoryError")

    page.get_by_role("link", name="RuntimeError").click()
    expect(page).to_have_url(re.compile(rf"/issues/{body['issue_id']}$"))
    page.evaluate("window.sameDocument = true")  # survives only if the page never reloads

    shape = page.get_by_test_id("shape-diff")
    mismatched = shape.locator("td.mismatch")
    expect(mismatched).to_have_count(2)  # dim 1: expected 512, actual 256
    expect(mismatched.nth(0)).to_have_text("512")
    expect(mismatched.nth(1)).to_contain_text("256")
    expect(shape.locator("td.dim:not(.mismatch)")).to_have_count(2)  # dim 0: ? vs 4

    card = page.locator("#suggestion")
    failed = page.locator("p.error[data-testid=analysis-status]")
    expect(card.or_(failed)).to_be_visible(timeout=120_000)  # the worker's answer, by polling
    if failed.is_visible():
        pytest.fail(f"{failed.inner_text()}\n{celery_worker.log()[-3000:]}")
    assert page.evaluate("window.sameDocument") is True
    expect(page.get_by_test_id("analysis-status")).to_have_count(0)  # polling stopped
    expect(card).to_contain_text("offline")
    page.get_by_role("button", name="Accept").click()
    expect(page.get_by_test_id("suggestion-status")).to_contain_text("accepted")

    page.reload()
    expect(page.get_by_test_id("suggestion-status")).to_contain_text("accepted")
    expect(page.locator(".decisions")).to_contain_text("accepted by alice")
    suggestion = Suggestion.objects.get(incident_id=body["incident_id"])
    assert suggestion.status == "accepted"
    assert Decision.objects.get(suggestion=suggestion).user.username == "alice"
    page.screenshot(path=str(tmp_path / "detail.png"), full_page=True)  # renders whole

    page.goto(f"{live_server.url}/")
    action_text = suggestion.action.replace("`", "")  # Markdown code spans render as <code>
    expect(page.locator("#timeline-results")).to_contain_text(action_text[:40])
    page.screenshot(path=str(tmp_path / "timeline.png"), full_page=True)

    # The same error again: the occurrence reuses the issue's analysis, and its own panel
    # shows that suggestion, says where it came from, and takes a decision on it.
    again = post(live_server, tenant, shape_error(batch=4))
    assert again["issue_id"] == body["issue_id"]
    page.goto(f"{live_server.url}/issues/{body['issue_id']}?incident={again['incident_id']}")
    reused = page.get_by_test_id("suggestion-reused")
    expect(reused).to_be_visible(timeout=60_000)  # once the worker marked it done
    expect(reused.get_by_role("link")).to_have_text(f"incident {body['incident_id']}")
    expect(page.get_by_test_id("suggestion-status")).to_contain_text("accepted")
    page.get_by_text("Reject…").click()
    page.get_by_label("Why is this wrong? (required)").fill("the head was already 512 wide")
    page.get_by_role("button", name="Reject").click()
    expect(page.get_by_test_id("suggestion-status")).to_contain_text("rejected")
    expect(page.get_by_test_id("suggestion-reused")).to_be_visible()  # still this occurrence
    suggestion.refresh_from_db()
    assert suggestion.status == "rejected"
    assert Suggestion.objects.filter(issue_id=body["issue_id"]).count() == 1


def test_viewer_sees_no_accept_and_a_forged_post_is_refused(live_server, page: Page):
    tenant = project_with_key("ml-platform")
    member(tenant.project, "victor", "viewer")
    body = post(live_server, tenant, shape_error(batch=4))
    suggestion = analysed(Incident.objects.get(pk=body["incident_id"]))

    log_in(page, live_server, "victor")
    page.goto(f"{live_server.url}/issues/{body['issue_id']}")
    expect(page.locator("#suggestion")).to_be_visible()
    expect(page.get_by_role("button", name="Accept")).to_have_count(0)
    expect(page.get_by_role("button", name="Re-analyse")).to_have_count(0)

    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    forged = page.request.post(
        f"{live_server.url}/suggestions/{suggestion.pk}/decision",
        form={"verdict": "accepted"},
        headers={"X-CSRFToken": token},
        max_redirects=0,
    )
    assert forged.status in (403, 404)
    assert not Decision.objects.exists()
    suggestion.refresh_from_db()
    assert suggestion.status == "proposed"


def test_user_of_another_project_gets_404(live_server, page: Page):
    tenant = project_with_key("ml-platform")
    body = post(live_server, tenant, shape_error(batch=4))
    member(project_with_key("other-team").project, "mallory", "responder")

    log_in(page, live_server, "mallory")
    expect(page.locator("#timeline-results")).not_to_contain_text("RuntimeError")
    response = page.goto(f"{live_server.url}/issues/{body['issue_id']}")
    assert response is not None and response.status == 404


def test_script_in_a_message_is_shown_as_text(live_server, page: Page):
    tenant = project_with_key("ml-platform")
    member(tenant.project, "alice", "responder")
    payload = shape_error(batch=4) | {"message": "boom <script>alert(1)</script> after"}
    body = post(live_server, tenant, payload)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    log_in(page, live_server, "alice")
    page.goto(f"{live_server.url}/issues/{body['issue_id']}")
    expect(page.locator("pre.message")).to_have_text("boom <script>alert(1)</script> after")
    expect(page.get_by_text("<script>alert(1)</script>").first).to_be_visible()
    page.goto(f"{live_server.url}/")
    page.wait_for_load_state("load")
    assert dialogs == []
