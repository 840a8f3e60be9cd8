"""An LLM answer carrying a URL its runbook lacks is re-asked, then replaced (issue 13).

A real worker runs the pipeline against an OpenAI-compatible server (pytest-httpserver)
that, as if steered by the incident's text, keeps sending the engineer to another site.
"""

from __future__ import annotations

import json

import pytest
import requests
from django.db import connection

from ingest.models import Incident
from rca.models import Suggestion
from tests.support.factories import project_with_key, shape_error
from tests.support.processes import Worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def corpus(transactional_db):
    from rca.corpus.embeddings import embed_missing_chunks
    from rca.corpus.store import load_runbooks

    load_runbooks()
    embed_missing_chunks()


@pytest.fixture
def llm_worker(httpserver, tmp_path):
    from django.conf import settings

    worker = Worker(
        dict(connection.settings_dict),
        settings.CELERY_BROKER_URL,
        tmp_path,
        queues="llm",
        extra_env={
            "OPENAI_BASE_URL": httpserver.url_for("/v1"),
            "OPENAI_API_KEY": "sk-test",
            "RCA_LLM_MODEL": "test-llm",
        },
    )
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()


def _chat(content: str) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-llm",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960},
    }


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
        return Response(json.dumps(_chat(json.dumps(answer))), content_type="application/json")

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
