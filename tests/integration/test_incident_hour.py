"""The timeline chart counts incidents from the hourly rollup kept by a database trigger."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from ingest.models import Incident, Issue
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import store
from webapp.charts import hourly_counts

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
