"""The stuck/pending index also carries project and analysis_joined, so the timeline's
backlog banner (webapp/timeline.py backlog()) is an index-only scan: at 1M incidents with
10,000 pending it read one heap page per pending row (~10,200 buffers, 48-67 ms on the
loaded machine), now ~2.7 ms. The same keys and condition, so the sweeper's plans keep it.

Built CONCURRENTLY under a temporary name, the old one dropped CONCURRENTLY, then renamed:
the table is never without the index and ingestion is never blocked by a build."""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("ingest", "0009_inbox"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="incident",
            index=models.Index(
                condition=models.Q(analysis_status__in=["pending", "analyzing"]),
                fields=["analysis_status", "analysis_updated_at"],
                include=["project", "analysis_joined"],
                name="incident_analysis_backlog",
            ),
        ),
        RemoveIndexConcurrently(model_name="incident", name="incident_analysis_stuck"),
        migrations.RenameIndex(
            model_name="incident",
            new_name="incident_analysis_stuck",
            old_name="incident_analysis_backlog",
        ),
    ]
