"""A Sentry event is accepted as the fields the mapping reads and mapped by the processor
(`ingest/sentry/deferred.py`): what the inbox keeps must map to exactly what the whole
event mapped to, and carry the id the stored incident will have."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.sentry.deferred import MAPPED_FIELDS, incident_payload, raw_payload
from ingest.sentry.mapping import event_to_incident
from tests.unit.test_sentry_mapping_other_sdks import _KNOWN, _exception, _json

_events = st.dictionaries(
    st.sampled_from(_KNOWN + ["modules", "extra", "request", "debug_meta", "user"])
    | st.text(max_size=8),
    _json,
) | st.fixed_dictionaries(
    {},
    optional={
        "event_id": st.uuids().map(str) | st.text(max_size=40),
        "exception": st.fixed_dictionaries({"values": st.lists(_exception, max_size=3)}),
        "modules": st.dictionaries(st.text(max_size=10), st.text(max_size=10)),
        "sdk": st.dictionaries(
            st.sampled_from(["name", "version", "integrations", "packages"]), _json
        )
        | _json,
        "logentry": _json,
    },
)
_envelope_ids = st.none() | st.uuids().map(lambda u: u.hex) | st.text(max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_events, _envelope_ids)
def test_the_kept_fields_map_to_what_the_whole_event_mapped_to(event, envelope_id):
    kept = raw_payload(event, envelope_id)
    assert set(kept) <= MAPPED_FIELDS
    assert event_to_incident(kept) == event_to_incident(event, envelope_id)
    incident_payload(kept)  # and it validates, as the request used to check


def test_an_sdk_s_modules_and_extra_are_not_queued_and_the_id_is_normalised():
    event = {
        "event_id": "6B7D9E0A-1C2F-4A3B-8D4E-5F6A7B8C9D0E",
        "message": "CUDA out of memory",
        "modules": {"torch": "2.4.0"},
        "extra": {"sys.argv": ["serve.py"]},
        "request": {"headers": {"Authorization": "Bearer x"}},
        "sdk": {"name": "sentry.python", "version": "2.76.0", "integrations": ["logging"]},
    }
    kept = raw_payload(event)
    assert kept == {
        "event_id": "6b7d9e0a1c2f4a3b8d4e5f6a7b8c9d0e",
        "message": "CUDA out of memory",
        "sdk": {"name": "sentry.python", "version": "2.76.0"},
    }


def test_the_envelope_id_stands_in_and_an_unusable_id_is_dropped():
    assert raw_payload({"message": "m"}, "AB" * 16)["event_id"] == "ab" * 16
    assert "event_id" not in raw_payload({"message": "m", "event_id": "no spaces allowed"})
