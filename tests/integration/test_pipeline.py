"""The suggestion pipeline end to end: API -> broker -> real worker -> Analysis + Suggestion."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
import requests
from django.db import connection
from django.utils import timezone

from ingest.models import Incident
from rca.models import Analysis, Suggestion
from rca.queue.sweeper import sweep
from tests.support.corpus import store_embedded_runbooks
from tests.support.factories import project_with_key, shape_error
from tests.support.openai_stub import chat_completion
from tests.support.processes import Worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def tenant():
    return project_with_key("pipeline")


@pytest.fixture(autouse=True)
def corpus(transactional_db):
    """The bundled runbooks, embedded (the test process may load the model; the web may not)."""
    store_embedded_runbooks()


def post(live_server, tenant, payload) -> dict:
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents", json=payload, headers=tenant.auth, timeout=10
    )
    assert resp.status_code in (200, 202), resp.text
    return resp.json()


def done(incident_id: int) -> Incident | None:
    incident = Incident.objects.get(pk=incident_id)
    return incident if incident.analysis_status in ("done", "failed") else None


def test_posted_incident_gets_a_validated_offline_suggestion(live_server, tenant, celery_worker):
    body = post(live_server, tenant, shape_error(batch=4))
    incident = wait_for(lambda: done(body["incident_id"]), timeout=90, interval=0.3)
    assert incident.analysis_status == "done", celery_worker.log()[-3000:]
    suggestion = Suggestion.objects.get(incident=incident)
    assert suggestion.provider == "offline"
    assert suggestion.valid and suggestion.validation["ok"]
    assert suggestion.validation["grounded"] and suggestion.validation["format_ok"]
    analysis = suggestion.analysis
    assert suggestion.runbook_slug in [r["slug"] for r in analysis.retrieved]
    assert analysis.retrieved[0]["failure_class"] == "matmul_shape_mismatch"
    assert {"bm25", "cosine", "fused"} <= set(analysis.retrieved[0])
    assert analysis.prompt_version and analysis.query_embedding is not None
    assert "256" in suggestion.reason and "512" in suggestion.reason

    shown = requests.get(
        f"{live_server.url}/api/v1/incidents/{body['incident_id']}/analysis",
        headers=tenant.auth,
        timeout=5,
    ).json()
    assert shown["analysis_status"] == "done" and shown["reused"] is False
    assert shown["analysis"]["suggestion"]["action"] == suggestion.action
    assert shown["analysis"]["suggestion"]["provider"] == "offline"
    assert shown["analysis"]["suggestion"]["validation"]["ok"] is True
    assert shown["analysis"]["retrieved"][0]["slug"] == analysis.retrieved[0]["slug"]
    stranger = project_with_key("strangers")
    hidden = requests.get(
        f"{live_server.url}/api/v1/incidents/{body['incident_id']}/analysis",
        headers=stranger.auth,
        timeout=5,
    )
    assert hidden.status_code == 404


def test_task_delivered_twice_is_analysed_once(live_server, tenant, celery_worker, tmp_path):
    from django.conf import settings

    from rca.queue.tasks import analyse_incident

    second = Worker(dict(connection.settings_dict), settings.CELERY_BROKER_URL, tmp_path)
    try:
        second.wait_ready()
        body = post(live_server, tenant, shape_error(batch=8))
        for _ in range(3):
            analyse_incident.delay(body["incident_id"])
        wait_for(lambda: done(body["incident_id"]), timeout=90, interval=0.3)
    finally:
        second.stop()
    assert Analysis.objects.filter(incident_id=body["incident_id"]).count() == 1
    assert Suggestion.objects.filter(incident_id=body["incident_id"]).count() == 1


def test_same_signals_reuse_the_issue_analysis_and_new_shapes_reanalyse(
    live_server, tenant, celery_worker
):
    first = post(live_server, tenant, shape_error(batch=4))
    wait_for(lambda: done(first["incident_id"]), timeout=90, interval=0.3)
    same = post(live_server, tenant, {**shape_error(batch=4), "environment": "canary"})
    wait_for(lambda: done(same["incident_id"]), timeout=60, interval=0.3)
    assert same["issue_id"] == first["issue_id"]
    assert Analysis.objects.filter(issue_id=first["issue_id"]).count() == 1
    reused = requests.get(
        f"{live_server.url}/api/v1/incidents/{same['incident_id']}/analysis",
        headers=tenant.auth,
        timeout=5,
    ).json()
    assert reused["reused"] is True and reused["analysis"]["incident_id"] == first["incident_id"]
    assert reused["reused_from_incident_id"] == first["incident_id"]

    other_batch = post(live_server, tenant, shape_error(batch=16))  # shape diff differs
    wait_for(lambda: done(other_batch["incident_id"]), timeout=60, interval=0.3)
    assert other_batch["issue_id"] == first["issue_id"]
    assert Analysis.objects.filter(issue_id=first["issue_id"]).count() == 2


def test_reanalyse_forces_a_new_analysis(live_server, tenant, celery_worker):
    from rca.queue.intake import reanalyse

    body = post(live_server, tenant, shape_error(batch=4))
    wait_for(lambda: done(body["incident_id"]), timeout=90, interval=0.3)
    reanalyse(body["incident_id"])
    wait_for(
        lambda: Suggestion.objects.filter(incident_id=body["incident_id"]).count() == 2,
        timeout=60,
        interval=0.3,
    )
    assert Analysis.objects.filter(incident_id=body["incident_id"]).count() == 2


def test_sweeper_requeues_an_incident_stuck_in_analyzing(live_server, tenant, celery_worker):
    body = post(live_server, tenant, shape_error(batch=4))
    wait_for(lambda: done(body["incident_id"]), timeout=90, interval=0.3)
    # A worker died mid-analysis an hour ago: the row says analyzing, nobody works on it.
    Incident.objects.filter(pk=body["incident_id"]).update(
        analysis_status="analyzing", analysis_updated_at=timezone.now() - timedelta(hours=1)
    )
    Analysis.objects.filter(incident_id=body["incident_id"]).delete()
    assert sweep(stuck_after=timedelta(minutes=10)) == [body["incident_id"]]
    incident = wait_for(lambda: done(body["incident_id"]), timeout=60, interval=0.3)
    assert incident.analysis_status == "done"
    assert Suggestion.objects.filter(incident_id=body["incident_id"]).count() == 1
    assert sweep(stuck_after=timedelta(minutes=10)) == []


# ------------------------------------------- OpenAI-compatible (llm_worker: integration conftest)


def _reanalyse_with_llm(live_server, tenant) -> tuple[int, str]:
    """An incident analysed offline first, then re-analysed by the LLM worker's queue."""
    from rca.queue.tasks import analyse_incident

    body = post(live_server, tenant, shape_error(batch=4))
    wait_for(lambda: done(body["incident_id"]), timeout=90, interval=0.3)
    slug = Suggestion.objects.get(incident_id=body["incident_id"]).runbook_slug
    analyse_incident.apply_async((body["incident_id"],), {"force": True}, queue="llm")
    wait_for(
        lambda: Suggestion.objects.filter(incident_id=body["incident_id"]).count() == 2,
        timeout=90,
        interval=0.3,
    )
    return body["incident_id"], slug


def _latest(incident_id: int) -> Suggestion:
    return Suggestion.objects.filter(incident_id=incident_id).latest("created_at")


def test_llm_answer_citing_unknown_runbook_is_reasked_with_the_complaint(
    live_server, tenant, httpserver, celery_worker, llm_worker
):
    from werkzeug import Response

    seen: list[dict] = []
    grounded_slug: list[str] = []

    def handler(request):
        seen.append(json.loads(request.data))
        if len(seen) == 1:
            answer = {
                "action": "Reshape the input tensor.",
                "reason": "Shapes differ.",
                "runbook": "made-up-runbook",
                "confidence": 0.9,
            }
        else:
            answer = {
                "action": "Set the head's in_features to 256.",
                "reason": "The head expects 512 input features but the batch has 256.",
                "runbook": grounded_slug[0],
                "confidence": 0.8,
            }
        return Response(
            json.dumps(chat_completion(json.dumps(answer))), content_type="application/json"
        )

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handler)
    body = post(live_server, tenant, shape_error(batch=4))
    wait_for(lambda: done(body["incident_id"]), timeout=90, interval=0.3)
    grounded_slug.append(Suggestion.objects.get(incident_id=body["incident_id"]).runbook_slug)
    from rca.queue.tasks import analyse_incident

    analyse_incident.apply_async((body["incident_id"],), {"force": True}, queue="llm")
    wait_for(
        lambda: Suggestion.objects.filter(incident_id=body["incident_id"]).count() == 2,
        timeout=90,
        interval=0.3,
    )
    suggestion = _latest(body["incident_id"])
    assert len(seen) == 2, llm_worker.log()[-2000:]
    assert "made-up-runbook" in seen[1]["messages"][-1]["content"]  # the complaint went back
    assert (suggestion.provider, suggestion.model) == ("openai", "test-llm")
    assert suggestion.valid, suggestion.validation
    assert suggestion.analysis.tokens_prompt == 1800
    assert len(suggestion.analysis.attempts) == 2


def test_llm_server_errors_fall_back_to_the_offline_provider(
    live_server, tenant, httpserver, celery_worker, llm_worker
):
    httpserver.expect_request("/v1/chat/completions").respond_with_data(
        "upstream exploded", status=500
    )
    incident_id, _ = _reanalyse_with_llm(live_server, tenant)
    suggestion = _latest(incident_id)
    assert suggestion.provider == "offline"
    assert suggestion.valid
    assert "500" in suggestion.analysis.attempts[0]["error"]


def test_every_incident_of_a_batch_is_analysed(live_server, tenant, celery_worker):
    oom = {
        "service": "trainer",
        "error_type": "torch.OutOfMemoryError",
        "message": "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 39.59 GiB total)",
    }
    resp = requests.post(
        f"{live_server.url}/api/v1/incidents/batch",
        json={"incidents": [shape_error(batch=2), oom, shape_error(batch=16)]},
        headers=tenant.auth,
        timeout=10,
    )
    assert resp.status_code == 202, resp.text
    ids = [r["incident_id"] for r in resp.json()["results"]]
    finished = wait_for(
        lambda: all(done(i) for i in ids) and [done(i) for i in ids], timeout=90, interval=0.3
    )
    assert [i.analysis_status for i in finished] == ["done"] * 3, celery_worker.log()[-3000:]
    top = {a.incident_id: a.retrieved[0]["failure_class"] for a in Analysis.objects.all()}
    assert top[ids[0]] == top[ids[2]] == "matmul_shape_mismatch"
    assert top[ids[1]] != "matmul_shape_mismatch"


@pytest.mark.parametrize("in_background", [True, False], ids=["background", "inline"])
def test_concurrent_posts_are_all_analysed_however_the_message_is_published(
    live_server, tenant, celery_worker, settings, in_background
):
    """Background: ids posted while a publish is in flight travel together in one message."""
    settings.RCA_PUBLISH_IN_BACKGROUND = in_background
    with ThreadPoolExecutor(6) as pool:
        bodies = list(
            pool.map(lambda b: post(live_server, tenant, shape_error(batch=b)), range(1, 13))
        )
    ids = [b["incident_id"] for b in bodies]
    finished = wait_for(
        lambda: all(done(i) for i in ids) and [done(i) for i in ids], timeout=120, interval=0.3
    )
    assert [i.analysis_status for i in finished] == ["done"] * 12, celery_worker.log()[-3000:]
    assert Analysis.objects.filter(incident_id__in=ids).count() == 12
