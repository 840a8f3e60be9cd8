"""Untrusted Alertmanager payloads over the full stack (Hypothesis): a clear 400 naming a field,
or every firing alert accepted and findable by its event id; never a 5xx, never one lost."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.models import Incident
from tests.support.factories import project_with_key

pytestmark = pytest.mark.django_db

text = st.text(max_size=40) | st.sampled_from(["", " ", "\x00", "firing", "a" * 1200])
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
labels = st.dictionaries(st.text(min_size=1, max_size=30), text, max_size=6) | json_value
alert = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["firing", "resolved"]) | json_value,
        "labels": labels,
        "annotations": labels,
        "startsAt": st.sampled_from(
            ["2026-12-04T10:00:00Z", "2026-12-04T10:00:00.123456789+02:00", "0001-01-01T00:00:00Z"]
        )
        | json_value,
        "fingerprint": st.from_regex(r"[0-9a-f]{16}", fullmatch=True) | json_value,
    },
    optional={"generatorURL": text, "endsAt": text, "extra": json_value},
)
body = st.fixed_dictionaries(
    {"version": st.just("4"), "status": st.just("firing"), "alerts": st.lists(alert, max_size=4)},
    optional={"receiver": text, "groupLabels": labels, "commonLabels": labels},
)


@pytest.fixture
def tenant(settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE = (
        0  # the examples are many requests; the limit is not tested here
    )
    return project_with_key("am-fuzz")


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(payload=body)
def test_any_payload_is_refused_clearly_or_accepted_whole(client, tenant, payload):
    resp = client.post(
        "/api/v1/alertmanager",
        data=json.dumps(payload),
        content_type="application/json",
        headers=tenant.auth,
    )
    assert resp.status_code in (200, 202, 400), resp.content
    answer = resp.json()
    if resp.status_code == 400:
        assert answer["detail"] and all(
            d["loc"][:2] == ["body", "payload"] for d in answer["detail"]
        )
        return
    firing = [a for a in payload["alerts"] if a["status"] == "firing"]
    assert len(answer["event_ids"]) == len(firing)
    stored = Incident.objects.filter(project=tenant.project, event_id__in=answer["event_ids"])
    assert stored.count() == len(set(answer["event_ids"]))
