"""The timeline chart counts incidents from rollups (hourly; daily in six hours) a trigger keeps."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from ingest.models import Incident, Issue
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import store
from webapp.charts import SIX_HOURS, bucket_start, hourly_counts, incident_counts

pytestmark = pytest.mark.django_db


def test_chart_counts_every_stored_incident_and_keeps_them_after_retention():
    project = project_with_key("ml-platform").project
    incidents = [store(project, shape_error(batch=4)) for _ in range(3)]
    now = timezone.now()

    def this_hour() -> int:
        counts = hourly_counts(Issue.objects.filter(project=project), now - timedelta(hours=1), now)
        return counts[-1][1] + counts[-2][1]  # the last two buckets cover the past hour

    assert this_hour() == 3
    Incident.objects.filter(pk__in=[i.pk for i in incidents]).update(
        analysis_status=Incident.Analysis.DONE
    )
    call_command("retention", "--days", "0")
    assert not Incident.objects.filter(project=project).exists()
    assert this_hour() == 3  # history, like the issue's occurrence count


def test_a_month_is_counted_in_six_hour_bars_from_one_multi_row_insert():
    project = project_with_key("ml-platform").project
    first = store(project, shape_error(batch=4))
    # One INSERT statement of 40 more incidents, 5 hours apart: the statement-level
    # trigger must spread them over many hours and six-hour bars at once.
    columns = [f.column for f in Incident._meta.concrete_fields if not f.primary_key]
    changed = {
        "received_at": "i.received_at - g * interval '5 hours'",
        "event_id": "i.event_id || '-' || g",
    }
    select = ", ".join(changed.get(c, f"i.{c}") for c in columns)
    sql = (
        f"INSERT INTO ingest_incident ({', '.join(columns)}) SELECT {select} "  # noqa: S608 - the model's columns
        "FROM ingest_incident i, generate_series(1, 40) g WHERE i.id = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [first.pk])
    now = timezone.now()
    issues = Issue.objects.filter(project=project)

    width, buckets = incident_counts(issues, now - timedelta(days=30), now)
    assert width == SIX_HOURS and len(buckets) == 121
    expected = Counter(
        bucket_start(at, SIX_HOURS)
        for at in Incident.objects.filter(project=project).values_list("received_at", flat=True)
    )
    assert {at: n for at, n in buckets if n} == expected
    week = hourly_counts(issues, now - timedelta(days=7), now)
    assert len(week) == 169 and sum(n for _, n in week) == 1 + 33  # 5 h apart: 33 in 7 days
