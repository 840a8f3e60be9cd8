"""/metrics: what an operator's Prometheus sees after real traffic, who may read it, and
every process's counts summed in multiprocess mode."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from ingest import broker_depth, metrics
from ingest.models import Incident
from rca import notify
from rca.models import Notification, Suggestion
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import analysed, store
from webapp.supervisor import Supervisor, Watched, children

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _test_broker(broker_url) -> None:
    """Every scrape reads queue depths from the test run's broker, whose connections the
    session releases at its end (see tests/conftest.py)."""


Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    """Every sample as {(name, labels): value}."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def scrape(client: Client, **extra: str) -> Samples:
    response = client.get("/metrics", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return parse(response.content.decode())


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def post(client: Client, key: str, body: object, path: str = "/api/v1/incidents", **extra):
    return client.post(
        path, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}", **extra
    )


def test_ingest_traffic_is_counted_by_project_source_and_refusal_reason(client, settings):
    tenant, limited = project_with_key("ml-platform"), project_with_key("search")
    before = scrape(client)

    first = shape_error(batch=4) | {"event_id": "a" * 32}
    assert post(client, tenant.key, first).status_code == 202
    assert post(client, tenant.key, first).status_code == 200  # a retry: not received again
    assert post(client, tenant.key, shape_error(batch=8)).status_code == 202
    batch = {"incidents": [shape_error(batch=16), {"service": "ranker"}]}
    assert post(client, tenant.key, batch, "/api/v1/incidents/batch").status_code == 202
    assert post(client, tenant.key, {"service": "ranker"}).status_code == 400
    assert post(client, "rc_not-a-key", shape_error(batch=4)).status_code == 401
    as_text = {"content_type": "text/plain", "HTTP_AUTHORIZATION": f"Bearer {tenant.key}"}
    assert client.post("/api/v1/incidents", "x", **as_text).status_code == 415
    settings.RCA_MAX_BODY_BYTES = 100
    assert post(client, tenant.key, shape_error(batch=4)).status_code == 413
    settings.RCA_MAX_BODY_BYTES = 1024 * 1024
    settings.RCA_RATE_LIMIT_PER_MINUTE, settings.RCA_RATE_LIMIT_BURST = 0.001, 1
    assert post(client, limited.key, shape_error(batch=4)).status_code == 202
    assert post(client, limited.key, shape_error(batch=4)).status_code == 429
    assert client.get("/api/v1/incidents", HTTP_AUTHORIZATION="Bearer x").status_code == 401

    after = scrape(client)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    received = "rootcause_incidents_received_total"
    assert delta(received, project="ml-platform", source="api") == 3
    assert delta(received, project="search", source="api") == 1
    rejected = "rootcause_ingest_rejected_total"
    assert {
        reason: delta(rejected, reason=reason)
        for reason in ("invalid", "invalid_item", "unauthorized", "unsupported_media_type")
        + ("too_large", "rate_limited")
    } == dict.fromkeys(
        ("invalid", "invalid_item", "unauthorized", "unsupported_media_type")
        + ("too_large", "rate_limited"),
        1,
    )  # the refused GET is no ingest request, and counts nowhere
    # Analyses are not published in this test: everything stored is still waiting.
    assert value(after, "rootcause_analysis_queue_depth", state="pending") == 4
    assert value(after, "rootcause_analysis_queue_depth", state="analyzing") == 0


def test_verdicts_are_counted(client):
    tenant = project_with_key("ml-platform")
    suggestion: Suggestion = analysed(store(tenant.project, shape_error(batch=4)))
    before = scrape(client)
    decision = {"verdict": "accepted"}
    path = f"/api/v1/suggestions/{suggestion.pk}/decision"
    assert post(client, tenant.key, decision, path).status_code == 200
    after = scrape(client)
    name = "rootcause_suggestions_total"
    accepted = value(after, name, verdict="accepted") - value(before, name, verdict="accepted")
    assert accepted == 1
    # Every metric is exposed before anything was counted, so dashboards show 0, not "no data".
    families = {f.name for f in text_string_to_metric_families(client.get("/metrics").text)}
    assert {
        "rootcause_incidents_received",
        "rootcause_ingest_rejected",
        "rootcause_analysis_seconds",
        "rootcause_analysis_queue_depth",
        "rootcause_suggestions",
        "rootcause_llm_tokens",
        "rootcause_notifications",
        "rootcause_oldest_waiting_seconds",
        "rootcause_broker_up",
    } <= families


def test_slack_delivery_outcomes_are_counted(client, settings, httpserver):
    settings.RCA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    settings.RCA_SLACK_TIMEOUT, settings.RCA_SLACK_MAX_ATTEMPTS = 2.0, 3
    tenant = project_with_key("ml-platform")
    hook = "/services/T0001/B0001/metricsh00k"
    notify.set_webhook(tenant.project, httpserver.url_for(hook))
    store(tenant.project, shape_error(batch=4))  # a new issue: one alert queued
    alert = Notification.objects.get(project=tenant.project)
    before = scrape(client)

    httpserver.expect_oneshot_request(hook, method="POST").respond_with_data("busy", status=500)
    with pytest.raises(notify.RetryLater):
        notify.deliver(alert.pk)
    httpserver.expect_oneshot_request(hook, method="POST").respond_with_data("ok")
    notify.deliver(alert.pk)

    after = scrape(client)
    name = "rootcause_notifications_total"
    assert {
        outcome: value(after, name, outcome=outcome) - value(before, name, outcome=outcome)
        for outcome in ("retry", "sent", "failed")
    } == {"retry": 1, "sent": 1, "failed": 0}


def test_the_grafana_dashboard_queries_only_metrics_that_exist(client):
    families = {f.name for f in text_string_to_metric_families(client.get("/metrics").text)}
    dashboard = json.loads((Path(__file__).parents[2] / "docs/grafana-dashboard.json").read_text())
    queried = {
        re.sub(r"_(total|bucket|count|sum)$", "", name)
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"rootcause_[a-z_]+", target["expr"])
    }
    assert queried and queried <= families


def test_open_on_loopback_only_unless_a_token_is_set(client, settings):
    settings.RCA_METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 200  # the test client is 127.0.0.1
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 403
    # A client's own X-Forwarded-For does not make it local.
    spoofed = client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert spoofed.status_code == 403

    settings.RCA_METRICS_TOKEN = "s3cret-token"
    assert client.get("/metrics").status_code == 401  # loopback too, once a token is set
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-tokeX")
    assert wrong.status_code == 401 and wrong["WWW-Authenticate"].startswith("Bearer")
    right = client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Bearer s3cret-token")
    assert right.status_code == 200
    assert client.post("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 405


COUNT_IN_A_PROCESS = """
import sys
from ingest import metrics
metrics.INCIDENTS_RECEIVED.labels("ml-platform", "api").inc(int(sys.argv[1]))
metrics.ANALYSIS_SECONDS.labels("done").observe(float(sys.argv[1]))
"""


def _count_in_a_process(directory: Path, n: int) -> None:
    """A process of its own (as a gunicorn or pool worker is) counting `n` incidents."""
    directory.mkdir(parents=True, exist_ok=True)
    env = {"PROMETHEUS_MULTIPROC_DIR": str(directory), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", COUNT_IN_A_PROCESS, str(n)], env=env, check=True)


def _summed(text: bytes) -> tuple[float, float]:
    samples = parse(text.decode())
    received = value(
        samples, "rootcause_incidents_received_total", project="ml-platform", source="api"
    )
    return received, value(samples, "rootcause_analysis_seconds_count", outcome="done")


def test_every_process_counts_in_multiprocess_mode(tmp_path):
    directory = metrics.reset_dir(tmp_path / "metrics")
    _count_in_a_process(directory, 2)
    _count_in_a_process(directory, 3)
    body, _ = metrics.render(str(directory))
    assert _summed(body) == (5, 2)  # 2 + 3 incidents, one analysis each

    assert list(metrics.reset_dir(directory).iterdir()) == []  # a new run starts from zero


def test_containers_on_a_shared_volume_are_summed(tmp_path, monkeypatch):
    for container, n in (("web-1", 2), ("worker-1", 3), ("worker-2", 4)):
        _count_in_a_process(tmp_path / container, n)
    monkeypatch.setenv(metrics.SHARED_ENV, str(tmp_path))
    body, _ = metrics.render()
    assert _summed(body) == (9, 3)


def test_queue_depth_per_queue_is_read_from_the_broker(client, settings, broker_url):
    from webapp.celery import app

    scratch = f"metrics-scratch-{uuid.uuid4().hex[:8]}"
    settings.RCA_QUEUE_HOUSEKEEPING = scratch
    try:
        for n in range(3):  # by name: no worker consumes this queue
            app.send_task("tests.metrics.nothing", args=[n], queue=scratch)
        samples = scrape(client)
    finally:
        with app.connection_for_write() as connection:
            connection.default_channel.queue_purge(scratch)
            broker_depth._close_quietly(connection.default_channel)
    assert samples[("rootcause_broker_up", frozenset())] == 1
    assert samples[("rootcause_queue_depth", frozenset({("queue", scratch)}))] == 3
    # Every configured queue has a sample, an idle one reading 0 rather than "no data".
    fresh = ("rootcause_queue_depth", frozenset({("queue", settings.RCA_QUEUE_FRESH)}))
    assert fresh in samples


def test_an_unreachable_broker_reads_as_down_and_metrics_still_answer(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    samples = scrape(client)
    assert samples[("rootcause_broker_up", frozenset())] == 0
    assert not [name for name, _ in samples if name == "rootcause_queue_depth"]
    assert ("rootcause_analysis_queue_depth", frozenset({("state", "pending")})) in samples


def test_oldest_waiting_is_the_age_of_the_longest_pending_incident(client):
    name = ("rootcause_oldest_waiting_seconds", frozenset())
    assert scrape(client)[name] == 0  # nothing waiting
    tenant = project_with_key("ml-platform")
    waiting = store(tenant.project, shape_error(batch=4))
    store(tenant.project, shape_error(batch=8))
    ten_minutes_ago = timezone.now() - timedelta(minutes=10)
    Incident.objects.filter(pk=waiting.pk).update(analysis_updated_at=ten_minutes_ago)
    age = scrape(client)[name]
    assert 600 <= age < 3600
    # Once analysed, it no longer waits.
    Incident.objects.filter(pk=waiting.pk).update(analysis_status=Incident.Analysis.DONE)
    assert scrape(client)[name] < 600


def test_restarts_by_the_supervisor_are_counted_per_process(tmp_path):
    """A worker killed twice and the web server once, as `make run`'s supervisor restarts
    them: the scrape of the run's metrics directory names each count."""
    now = [0.0]
    dead: set[str] = set()

    def unit(name: str) -> Watched:
        return Watched(
            name,
            start=lambda: dead.discard(name),
            death=lambda: "was killed by SIGKILL" if name in dead else None,
            stop=lambda _deadline: None,
        )

    directory = metrics.reset_dir(tmp_path / "metrics")
    units = [unit("worker"), unit("web")]
    sup = Supervisor(units, clock=lambda: now[0], metrics_dir=directory)
    for died in ("worker", "web", "worker"):
        dead.add(died)
        for _ in range(2):  # notice the death, then restart once the backoff is over
            for u in units:
                sup.check(u)
            now[0] += 60
    samples = parse(metrics.render(str(directory))[0].decode())
    name = "rootcause_process_restarts_total"
    counts = {p: value(samples, name, process=p) for p in ("worker", "web", "postgres")}
    assert counts == {"worker": 2, "web": 1, "postgres": 0}
    # Every process the supervisor runs is a known label value.
    assert {kid.name for kid in children(8000, tmp_path)} | {"postgres"} == set(metrics.PROCESSES)
