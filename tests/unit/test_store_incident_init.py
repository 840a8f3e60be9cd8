"""The processor's unsaved incident (`ingest.store._incident`, built positionally since
issue 19's CPU work) is what Django's keyword constructor made: every attribute, the
defaults of the columns not named, the cached project and the instance's state."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ingest.models import Incident, Project
from ingest.store import _incident, _prepare, _Prepared


def _by_keywords(
    project: Project, p: _Prepared, issue_id: int, source: str, opened: str
) -> Incident:
    """`_incident` as it was: the keyword constructor."""
    d, clean = p.derived, p.clean
    return Incident(
        project=project,
        issue_id=issue_id,
        event_id=p.event_id,
        source=source,
        service=p.service,
        environment=str(clean.get("environment") or "")[:100],
        occurred_at=p.occurred_at,
        error_type=d.error_type,
        message=d.message,
        stacktrace_raw=clean.get("stacktrace"),
        exceptions=d.exceptions,
        logs=d.logs,
        shape_diff=d.shape_diff,
        shape_diff_source=d.shape_diff_source,
        inference_context=clean.get("inference_context") or {},
        resource_impact=clean.get("resource_impact") or {},
        tags=clean.get("tags") or {},
        model_id=d.model_id,
        fingerprint=d.fingerprint,
        opened_issue=opened,
    )


_PAYLOADS: list[dict[str, Any]] = [
    {"message": "boom"},
    {
        "event_id": "e1",
        "service": "svc-3",
        "environment": "prod",
        "occurred_at": "2026-12-07T10:00:00Z",
        "error_type": "RuntimeError",
        "message": "mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        "stacktrace": 'Traceback (most recent call last):\n  File "/srv/m.py", line 4, in f\n'
        "    return g(x)\nRuntimeError: mat1 and mat2 shapes cannot be multiplied",
        "logs": ["ERROR step=3 trace_id=t3 error_code=E_SHAPE"],
        "inference_context": {"model_id": "ranker-v3", "batch_size": 4},
        "resource_impact": {"gpu_memory_mb": 1024},
        "tags": {"release": "ranker@3.1.0"},
    },
    {
        "error_type": "ValueError",
        "stacktrace": [{"type": "ValueError", "message": "bad", "frames": [{"function": "f"}]}],
        "shape_diff": [{"op": "add", "expected": [2], "actual": [3]}],
        "fingerprint": ["{{ default }}", "x"],
    },
]


def _state(incident: Incident) -> tuple[dict[str, Any], dict[str, Any]]:
    attributes = {k: v for k, v in incident.__dict__.items() if k != "_state"}
    return attributes, dict(incident._state.__dict__)


@pytest.mark.parametrize("payload", _PAYLOADS)
@pytest.mark.parametrize("opened", ["", "new", "regressed"])
def test_the_positional_incident_is_the_keyword_one(payload, opened):
    project = Project(pk=7, name="p", slug="p")
    p = _prepare(payload, None, json.dumps(payload))
    made = _incident(project, p, 11, "sentry", opened)
    wanted = _by_keywords(project, p, 11, "sentry", opened)
    assert _state(made) == _state(wanted)
    assert made.project is project and made.project_id == 7
    assert type(made.analysis_status) is type(wanted.analysis_status)
    assert made._state.adding and made.pk is None
