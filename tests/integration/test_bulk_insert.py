"""Rows inserted through one JSON document read back exactly as the ORM would have stored them."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from ingest.bulk_insert import insert_rows
from ingest.models import Incident, Issue
from ingest.store import store_incidents
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 12, 3, tzinfo=UTC)


def _fields_of(incident: Incident) -> dict:
    return {f.attname: getattr(incident, f.attname) for f in Incident._meta.concrete_fields}


def test_every_field_round_trips_and_each_row_gets_its_own_key():
    project = project_with_key("bulk").project
    issue = Issue.objects.create(
        project=project, fingerprint="f", title="t", first_seen=NOW, last_seen=NOW
    )
    odd_zone = timezone(timedelta(hours=5, minutes=30))
    rows = [
        Incident(
            project=project,
            issue=issue,
            event_id=f"e{i}",
            service="ranker",
            occurred_at=datetime(2026, 12, 3, 7, 41, 1, 123456, tzinfo=odd_zone)
            + timedelta(seconds=i),
            error_type="RuntimeError",
            message='quote " backslash \\ tab \t unicode é 🚀 ' + str(i),
            stacktrace_raw=None if i % 2 else 'Traceback...\n  File "x.py"',
            exceptions=[{"type": "E", "frames": [{"vars": {"k": [1, 2.5, None, True]}}]}],
            logs=[],
            inference_context={"model_id": "m", "nested": {"a": {"b": "c"}}},
            tags={"": "empty key", "n": 0},
            fingerprint="f",
        )
        for i in range(7)
    ]
    insert_rows(rows)

    assert len({r.pk for r in rows}) == 7
    for row in rows:
        stored = Incident.objects.get(pk=row.pk)
        assert stored.event_id == row.event_id  # keys come back in insertion order
        assert _fields_of(stored) == _fields_of(row)
        assert stored.received_at is not None  # auto_now_add still applies
    # JSON null in the document is SQL NULL, as the ORM stores None for a nullable field.
    assert (
        Incident.objects.filter(pk__in=[r.pk for r in rows], stacktrace_raw__isnull=True).count()
        == 3
    )


def test_a_value_too_long_for_its_column_is_refused_like_the_orm_would():
    from django.db import DataError, transaction

    project = project_with_key("bulk-long").project
    issue = Issue.objects.create(
        project=project, fingerprint="f", title="t", first_seen=NOW, last_seen=NOW
    )
    row = Incident(
        project=project,
        issue=issue,
        event_id="x" * 65,
        service="s",
        occurred_at=datetime.now(UTC),
        fingerprint="f",
    )
    with pytest.raises(DataError), transaction.atomic():
        insert_rows([row])
    assert not Incident.objects.filter(project=project).exists()


def test_a_stored_batch_reads_back_in_the_order_it_was_sent():
    project = project_with_key("bulk-order").project
    payloads = [{**shape_error(batch=b), "event_id": f"ev-{b}"} for b in range(1, 41)]
    stored = store_incidents(project, payloads)
    by_pk = dict(Incident.objects.filter(project=project).values_list("pk", "event_id"))
    assert [by_pk[s.incident.pk] for s in stored] == [f"ev-{b}" for b in range(1, 41)]
