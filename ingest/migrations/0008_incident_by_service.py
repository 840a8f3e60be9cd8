"""Index for the API's incident list filtered by service (bench/million.py: its count read
every incident of the project, 200 ms at 280,000). Built CONCURRENTLY: on a large table a
plain CREATE INDEX would block ingestion for as long as the build takes."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("ingest", "0007_incident_analysis_lease_until"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="incident",
            index=models.Index(
                fields=["project", "service", "-received_at"], name="incident_by_service"
            ),
        ),
    ]
