"""The alert -> incident mapping on any payload Alertmanager's schema admits (Hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.alertmanager.mapping import event_id, incident_payload, issue_fingerprint
from ingest.alertmanager.schema import MAX_ANNOTATIONS, MAX_LABELS, AlertIn
from ingest.schema import IncidentIn

names = st.text(min_size=1, max_size=100)
values = st.text(max_size=1000)
alerts = st.builds(
    AlertIn,
    status=st.sampled_from(["firing", "resolved"]),
    labels=st.dictionaries(names, values, max_size=MAX_LABELS)
    | st.fixed_dictionaries({"alertname": values, "job": values, "service": values}),
    annotations=st.dictionaries(
        st.sampled_from(["summary", "description", "runbook_url"]) | names,
        st.text(max_size=3000),
        max_size=MAX_ANNOTATIONS,
    ),
    startsAt=st.datetimes(
        min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
    ),
    generatorURL=values,
    fingerprint=st.from_regex(r"[0-9a-f]{0,16}", fullmatch=True),
)


@settings(max_examples=300, deadline=None)
@given(alerts)
def test_every_alert_maps_to_a_valid_incident_that_keeps_its_labels(alert: AlertIn) -> None:
    incident = IncidentIn.model_validate(incident_payload(alert))
    labels = alert.labels
    assert incident.service == (labels.get("service") or labels.get("job") or "alertmanager")[:200]
    if labels.get("alertname", "").strip():
        assert incident.error_type == labels["alertname"].strip()[:255]
    for name, value in labels.items():
        assert incident.tags[name] == value
    assert incident.occurred_at == alert.startsAt


@given(alerts, alerts)
def test_the_event_id_and_the_issue_are_the_alerts_own(a: AlertIn, b: AlertIn) -> None:
    same_firing = a.startsAt == b.startsAt and (a.fingerprint or a.labels) == (
        b.fingerprint or b.labels
    )
    if a.fingerprint and a.fingerprint == b.fingerprint:
        assert issue_fingerprint(a) == issue_fingerprint(b)
        assert (event_id(a) == event_id(b)) == (a.startsAt == b.startsAt)
    elif not same_firing and a.fingerprint and b.fingerprint:
        assert issue_fingerprint(a) != issue_fingerprint(b)
        assert event_id(a) != event_id(b)
