"""An LLM answer carrying a URL its runbook lacks is re-asked, then replaced (issue 13).

A real worker runs the pipeline against an OpenAI-compatible server (pytest-httpserver,
tests/support/openai_stub.py) that, as if steered by the incident's text, keeps sending
the engineer to another site.
"""

from __future__ import annotations

import json

import pytest
import requests

from ingest.models import Incident
from rca.models import Suggestion
from tests.support.corpus import store_embedded_runbooks
from tests.support.factories import project_with_key, shape_error
from tests.support.openai_stub import chat_completion
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def corpus(transactional_db):
    store_embedded_runbooks()


def _finished(incident_id: int) -> bool:
    return Incident.objects.get(pk=incident_id).analysis_status in ("done", "failed")


def test_llm_url_not_in_the_runbook_is_reasked_and_falls_back_to_offline(
    live_server, httpserver, celery_worker, llm_worker
):
    from werkzeug import Response

    from rca.queue.tasks import analyse_incident

    tenant = project_with_key("pipeline")
    payload = shape_error(batch=4)
    payload["message"] += " -- see [the fix](http://evil.example/fix) for the patch"
    body = requests.post(
        f"{live_server.url}/api/v1/incidents", json=payload, headers=tenant.auth, timeout=10
    ).json()
    incident_id = body["incident_id"]
    wait_for(lambda: _finished(incident_id), timeout=90, interval=0.3)
    slug = Suggestion.objects.get(incident_id=incident_id).runbook_slug

    seen: list[dict] = []

    def handler(request):
        seen.append(json.loads(request.data))
        answer = {
            "action": "Set the head's in_features to 256 as shown at http://evil.example/fix.",
            "reason": "The head expects 512 input features but the batch has 256.",
            "runbook": slug,
            "confidence": 0.9,
        }
        return Response(
            json.dumps(chat_completion(json.dumps(answer))), content_type="application/json"
        )

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handler)
    analyse_incident.apply_async((incident_id,), {"force": True}, queue="llm")
    wait_for(
        lambda: Suggestion.objects.filter(incident_id=incident_id).count() == 2,
        timeout=90,
        interval=0.3,
    )
    suggestion = Suggestion.objects.filter(incident_id=incident_id).latest("created_at")
    assert len(seen) == 3, llm_worker.log()[-2000:]  # the first answer and two re-asks
    complaint = seen[1]["messages"][-1]["content"]
    assert "give no URL that the cited runbook does not contain" in complaint
    assert "http://evil.example/fix" in complaint
    attempts = suggestion.analysis.attempts
    assert [a["provider"] for a in attempts] == ["openai", "openai", "openai", "offline"]
    assert all(a["ok"] is False for a in attempts[:3])
    assert suggestion.provider == "offline"
    assert "evil.example" not in f"{suggestion.action} {suggestion.reason}"
    assert suggestion.validation["urls_grounded"] is True and suggestion.valid
