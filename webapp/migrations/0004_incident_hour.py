"""The timeline chart's rollup (webapp.models.IncidentHour), its trigger and a backfill.

A statement-level AFTER INSERT trigger with a transition table: one grouped upsert per
INSERT statement, so ingest's multi-row inserts cost one upsert per (issue, hour) touched.
Depends on ingest 0006 only: it needs the incident table, not later ingest columns.
"""

import django.db.models.deletion
from django.db import migrations, models

COUNT_FUNCTION = """
CREATE FUNCTION webapp_incident_hour_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webapp_incidenthour (issue_id, hour, count)
    SELECT issue_id, date_trunc('hour', received_at, 'UTC'), count(*)
    FROM new_incidents GROUP BY 1, 2
    ON CONFLICT (issue_id, hour)
    DO UPDATE SET count = webapp_incidenthour.count + EXCLUDED.count;
    RETURN NULL;
END
$$
"""
TRIGGER = """
CREATE TRIGGER webapp_incident_hour_count AFTER INSERT ON ingest_incident
REFERENCING NEW TABLE AS new_incidents
FOR EACH STATEMENT EXECUTE FUNCTION webapp_incident_hour_count()
"""
BACKFILL = """
INSERT INTO webapp_incidenthour (issue_id, hour, count)
SELECT issue_id, date_trunc('hour', received_at, 'UTC'), count(*)
FROM ingest_incident GROUP BY 1, 2
"""


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0006_issue_analysis_leader"),
        ("webapp", "0003_membership"),
    ]

    operations = [
        migrations.CreateModel(
            name="IncidentHour",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("hour", models.DateTimeField()),
                ("count", models.PositiveIntegerField(default=0)),
                (
                    "issue",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="ingest.issue",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("issue", "hour"), name="incident_hour_once")
                ],
            },
        ),
        migrations.RunSQL(
            sql=[COUNT_FUNCTION, TRIGGER, BACKFILL],
            reverse_sql=[
                "DROP TRIGGER IF EXISTS webapp_incident_hour_count ON ingest_incident",
                "DROP FUNCTION IF EXISTS webapp_incident_hour_count()",
            ],
        ),
    ]
