"""The issue page: shape-diff picture, stack, logs, escaping, and the polling panel."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.support.factories import project_with_key, shape_error
from tests.support.ui import analysed, member, store

pytestmark = pytest.mark.django_db


@pytest.fixture
def responder(client):
    project = project_with_key("ml-platform").project
    client.force_login(member(project, "alice"))
    return project


def test_shape_diff_marks_only_the_mismatched_dim_and_shows_its_score(client, responder):
    incident = store(responder, shape_error(batch=4))  # expected [?, 512], actual [4, 256]
    html = client.get(reverse("issue", args=[incident.issue_id])).content.decode()
    table = html[
        html.index('data-testid="shape-diff"') : html.index("</table>", html.index("shape-diff"))
    ]
    assert table.count('class="dim mismatch"') == 2  # dim 1, expected and actual row
    assert '<td class="dim">?</td>' in table and '<td class="dim">4</td>' in table
    assert 'incompatibility <span class="score">0.75</span>' in table


def test_stack_highlights_app_frames_and_collapses_library_frames(client, responder):
    incident = store(responder, shape_error(batch=4))
    html = client.get(reverse("issue", args=[incident.issue_id])).content.decode()
    assert html.count('class="frame in-app"') == 2
    assert "1 library frame</summary>" in html


def test_logs_show_extracted_fields_as_columns(client, responder):
    payload = shape_error(batch=4) | {
        "logs": [
            '{"ts": "2026-01-01T00:00:00Z", "level": "ERROR", "message": "forward failed", '
            '"trace_id": "abc123", "error_code": "E_SHAPE"}'
        ]
    }
    incident = store(responder, payload)
    html = client.get(reverse("issue", args=[incident.issue_id])).content.decode()
    assert "<code>abc123</code>" in html and "<code>E_SHAPE</code>" in html


def test_user_supplied_text_is_escaped(client, responder):
    payload = shape_error(batch=4) | {
        "message": "boom <script>alert(1)</script>",
        "service": "<img src=x onerror=alert(1)>",
    }
    incident = store(responder, payload)
    for url in ["/", reverse("issue", args=[incident.issue_id])]:
        html = client.get(url).content.decode()
        assert "<script>alert(1)</script>" not in html
        assert "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_panel_polls_while_pending_and_stops_when_done(client, responder):
    incident = store(responder, shape_error(batch=4))
    url = reverse("analysis", args=[incident.pk])
    pending = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 1s"' in pending and "Analysing" in pending
    suggestion = analysed(incident)
    done = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 1s"' not in done
    assert suggestion.action in done
    assert "✓ stack path 100%" in done and "linear-layer-shape-mismatch" in done


def test_panel_without_htmx_redirects_to_the_issue_page(client, responder):
    incident = store(responder, shape_error(batch=4))
    response = client.get(reverse("analysis", args=[incident.pk]))
    assert response.status_code == 302
    assert response["Location"] == f"/issues/{incident.issue_id}?incident={incident.pk}"


def test_reanalyse_keeps_polling_until_a_newer_analysis_exists(client, responder, monkeypatch):
    from rca.queue import intake

    incident = store(responder, shape_error(batch=4))
    first = analysed(incident)
    requested = []
    monkeypatch.setattr(intake, "reanalyse", requested.append)
    html = client.post(
        reverse("reanalyse", args=[incident.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert requested == [incident.pk]
    assert f"after={first.analysis_id}" in html and 'hx-trigger="every 1s"' in html


def test_resolve_without_javascript_redirects_and_with_htmx_returns_the_fragment(client, responder):
    incident = store(responder, shape_error(batch=4))
    url = reverse("issue-status", args=[incident.issue_id])
    response = client.post(url, {"status": "resolved"})
    assert response.status_code == 302
    incident.issue.refresh_from_db()
    assert incident.issue.status == "resolved"
    fragment = client.post(url, {"status": "open"}, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    assert fragment.content.decode().lstrip().startswith('<div id="issue-status"')
    assert fragment["HX-Trigger"] == "issue-status-changed"


def test_similar_past_fixes_are_shown_from_the_same_project_only(client, responder):
    earlier = store(responder, shape_error(batch=4))
    foreign = store(project_with_key("theirs").project, shape_error(batch=4))
    incident = store(responder, shape_error(batch=4) | {"service": "ranker-canary"})
    suggestion = analysed(incident)
    fix = {"kind": "past_fix", "slug": "s", "title": "t", "fused": 0.02}
    suggestion.analysis.retrieved += [
        fix | {"issue_id": earlier.issue_id, "incident_id": earlier.pk, "action": "Pad the batch"},
        fix | {"issue_id": foreign.issue_id, "incident_id": foreign.pk, "action": "Secret fix"},
    ]
    suggestion.analysis.save()
    html = client.get(reverse("issue", args=[incident.issue_id])).content.decode()
    assert "Pad the batch" in html and "Secret fix" not in html
