"""The official sentry-sdk, pointed at our live server, reports a real PyTorch error."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
import sentry_sdk

from ingest.models import Incident
from ingest.sentry.auth import build_dsn
from tests.support.factories import project_with_key
from tests.support.processes import wait_for

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.django_db(transaction=True)


def _ranker_forward(batch):
    head = torch.nn.Linear(512, 10)
    return head(batch)  # the real bug: features are 256 wide


@pytest.fixture
def sdk(live_server):
    tenant = project_with_key("sentry-users")
    host = urlsplit(live_server.url).netloc
    dsn = build_dsn(tenant.project.sentry_key, host, tenant.project.pk)
    sentry_sdk.init(
        dsn=dsn,
        default_integrations=False,
        environment="staging",
        release="ranker@3.1.0",
        server_name="gpu-node-7",
    )
    yield tenant
    sentry_sdk.get_client().close()
    sentry_sdk.init()  # no DSN: later tests see a disabled SDK


def test_real_sentry_sdk_event_becomes_incident_with_frames_shapes_and_breadcrumbs(sdk):
    with sentry_sdk.isolation_scope():  # tags and breadcrumbs must not leak into other tests
        sentry_sdk.set_tag("service", "ranker")
        sentry_sdk.set_context(
            "inference",
            {"model_id": "ranker-v3", "batch_size": 4, "device": "cpu", "framework": "pytorch"},
        )
        sentry_sdk.add_breadcrumb(
            category="request", message="POST /rank trace_id=ab12cd", level="info"
        )
        sentry_sdk.add_breadcrumb(
            category="model", message="loaded ranker-v3 weights", level="warning"
        )
        try:
            _ranker_forward(torch.randn(4, 256))
        except RuntimeError:
            sentry_sdk.capture_exception()
    sentry_sdk.flush(timeout=10)

    incident = wait_for(lambda: Incident.objects.filter(project=sdk.project).first(), timeout=15)
    assert incident.source == "sentry"
    assert incident.service == "ranker"
    assert incident.environment == "staging"
    assert incident.error_type == "RuntimeError"
    assert "mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)" in incident.message
    in_app = [f["function"] for f in incident.frames if f["in_app"]]
    assert in_app[-1] == "_ranker_forward"
    assert incident.shape_diff == [
        {"tensor": None, "op": "matmul", "expected": [None, 512], "actual": [4, 256]}
    ]
    assert [log["message"] for log in incident.logs] == [
        "POST /rank trace_id=ab12cd",
        "loaded ranker-v3 weights",
    ]
    assert incident.logs[1]["level"] == "WARNING"
    assert incident.inference_context["model_id"] == "ranker-v3"
