"""rootcause_client over real HTTP: to our live server, through Sentry, and when things fail."""

from __future__ import annotations

import json
import os
import threading
from urllib.parse import urlsplit

import pytest
import sentry_sdk
from rootcause_client import init, watch
from rootcause_client.config import Config
from rootcause_client.sentry_integration import RootcauseIntegration
from rootcause_client.transport import Transport
from werkzeug import Response

from ingest.models import Incident
from ingest.sentry.auth import build_dsn
from tests.support.factories import project_with_key
from tests.support.processes import wait_for

torch = pytest.importorskip("torch")
nn = torch.nn


def _ranker() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 256), nn.ReLU(), nn.Linear(512, 10))


@pytest.mark.django_db(transaction=True)
def test_a_failing_forward_becomes_an_incident_with_its_module_and_shapes(live_server):
    tenant = project_with_key("client-users")
    sender = init(live_server.url, tenant.key)
    model = _ranker()
    with pytest.raises(RuntimeError, match="4x256 and 512x10"), watch(model, service="ranker"):
        model(torch.zeros(4, 16))
    assert sender.flush(15)
    incident = wait_for(lambda: Incident.objects.filter(project=tenant.project).first(), 15)
    assert sender.sent == 1
    assert incident.service == "ranker"
    assert incident.error_type == "RuntimeError"
    assert incident.tags["module"] == "2"
    assert incident.shape_diff == [
        {"tensor": "2.input", "op": "Linear", "expected": [None, 512], "actual": [4, 256]}
    ]
    assert incident.inference_context["framework"] == "pytorch"
    assert any(f["function"] == "forward" for f in incident.frames)


@pytest.mark.django_db(transaction=True)
def test_sentry_events_carry_the_same_shape_context(live_server):
    tenant = project_with_key("sentry-and-client")
    host = urlsplit(live_server.url).netloc
    sentry_sdk.init(
        dsn=build_dsn(tenant.project.sentry_key, host, tenant.project.pk),
        default_integrations=False,
        auto_enabling_integrations=False,  # Django's would record our queries as breadcrumbs
        integrations=[RootcauseIntegration()],
    )
    try:
        model = _ranker()
        with sentry_sdk.isolation_scope():
            try:
                with watch(model, service="ranker", send=False):
                    model(torch.zeros(3, 16))
            except RuntimeError:
                sentry_sdk.capture_exception()
        sentry_sdk.flush(timeout=10)
    finally:
        sentry_sdk.get_client().close()
        # disabled again, installing nothing that would record later tests' queries
        sentry_sdk.init(default_integrations=False, auto_enabling_integrations=False)
    incident = wait_for(lambda: Incident.objects.filter(project=tenant.project).first(), 15)
    assert incident.source == "sentry"
    assert incident.tags["module"] == "2"
    assert {"tensor": "2.input", "op": "Linear", "expected": [None, 512], "actual": [3, 256]} in (
        incident.shape_diff
    )


def _transport(httpserver, **options) -> Transport:
    return Transport(Config(url=httpserver.url_for("").rstrip("/"), api_key="rc_x_y", **options))


def test_a_busy_server_is_retried_and_the_incident_stored_once(httpserver):
    bodies = []

    def answer(request):
        bodies.append(json.loads(request.data))
        if len(bodies) == 1:
            return Response('{"detail": []}', status=503, headers={"Retry-After": "0"})
        return Response('{"event_id": "x"}', status=202)

    httpserver.expect_request("/api/v1/incidents", method="POST").respond_with_handler(answer)
    sender = _transport(httpserver)
    assert sender.submit({"service": "s", "message": "boom", "event_id": "e1"})
    assert sender.flush(15)
    assert [b["event_id"] for b in bodies] == ["e1", "e1"]  # a retry, not a second incident
    assert (sender.sent, sender.failed) == (1, 0)
    assert bodies[0]["service"] == "s"


def test_a_refused_incident_is_not_retried(httpserver):
    httpserver.expect_request("/api/v1/incidents").respond_with_json({"detail": []}, status=400)
    sender = _transport(httpserver)
    sender.submit({"service": "s"})
    assert sender.flush(10)
    assert (sender.sent, sender.failed) == (0, 1)
    assert len(httpserver.log) == 1


def test_a_hung_server_never_blocks_the_service(httpserver):
    release = threading.Event()

    def hang(request):
        release.wait(20)
        return Response("{}", status=202)

    httpserver.expect_request("/api/v1/incidents").respond_with_handler(hang)
    sender = _transport(httpserver, queue_size=3, timeout=30)
    outcomes = [sender.submit({"service": "s", "event_id": f"e{i}"}) for i in range(20)]
    release.set()
    # one in flight, three queued: the rest were dropped at once, and counted
    assert outcomes.count(True) <= 4
    assert sender.dropped == outcomes.count(False) >= 16
    assert sender.flush(30)


def test_an_unreachable_server_leaves_the_services_error_as_it_was():
    init("http://127.0.0.1:9", "rc_x_y", max_attempts=1)
    model = _ranker()
    with pytest.raises(RuntimeError, match="4x256"), watch(model, service="ranker"):
        model(torch.zeros(4, 16))
    init("", "")


def test_keras_callback_reports_a_fit_whose_batches_do_not_fit_the_model(httpserver):
    os.environ.setdefault("KERAS_BACKEND", "torch")
    keras = pytest.importorskip("keras")
    np = pytest.importorskip("numpy")
    from rootcause_client.keras_callback import RootcauseCallback

    httpserver.expect_request("/api/v1/incidents").respond_with_json({}, status=202)
    init(httpserver.url_for("").rstrip("/"), "rc_x_y")
    model = keras.Sequential(
        [keras.Input((8,)), keras.layers.Dense(4, name="hidden"), keras.layers.Dense(1)]
    )
    model.compile("sgd", "mse")
    callback = RootcauseCallback(model, service="trainer")
    with pytest.raises(ValueError, match="incompatible"):
        model.fit(np.zeros((16, 5)), np.zeros((16, 1)), epochs=1, verbose=0, callbacks=[callback])
    from rootcause_client import flush

    assert flush(10)
    (request, _), *_ = httpserver.log
    sent = json.loads(request.data)
    assert sent["service"] == "trainer"
    assert sent["tags"]["module"] == "hidden"
    assert sent["shape_diff"] == [
        {"tensor": "x", "op": "Dense", "expected": [None, 8], "actual": [16, 5]}
    ]
    assert sent["inference_context"]["framework"] == "keras"
    init("", "")
