"""The 30-day chart's rollup (webapp.models.IncidentSixHours), kept by the hourly trigger.

The trigger function of 0004 gains a second grouped upsert (one per INSERT statement,
like the first), and the new table is backfilled from the hourly rollup rather than the
incidents: the hourly rows are fewer, and they still count incidents retention deleted.
The incident table is locked against inserts (SHARE) first, so no insert falls between
the backfill's snapshot and the new trigger taking effect at commit, and none waits on a
rollup lock while holding the incident table's (no deadlock with the trigger).

Both unique indexes carry the count (INCLUDE) so the chart's sums are index-only scans;
the foreign keys lose their own index, which the unique one (issue first) replaces. An
index-only scan skips the heap only on pages the visibility map marks all-visible, so
autovacuum visits the rollups after 1% of their rows changed rather than 20%: otherwise the
most recent days, which every range reads, would stay heap reads for days.
"""

import django.db.models.deletion
from django.db import migrations, models

HOURLY = """
    INSERT INTO webapp_incidenthour (issue_id, hour, count)
    SELECT issue_id, date_trunc('hour', received_at, 'UTC'), count(*)
    FROM new_incidents GROUP BY 1, 2
    ON CONFLICT (issue_id, hour)
    DO UPDATE SET count = webapp_incidenthour.count + EXCLUDED.count;
"""
SIX_HOURS = """
    INSERT INTO webapp_incidentsixhours (issue_id, start, count)
    SELECT issue_id, date_bin('6 hours', received_at, TIMESTAMPTZ '2000-01-01 00:00+00'),
           count(*)
    FROM new_incidents GROUP BY 1, 2
    ON CONFLICT (issue_id, start)
    DO UPDATE SET count = webapp_incidentsixhours.count + EXCLUDED.count;
"""
FUNCTION = """
CREATE OR REPLACE FUNCTION webapp_incident_hour_count() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
{body}
    RETURN NULL;
END
$$
"""
BACKFILL = """
INSERT INTO webapp_incidentsixhours (issue_id, start, count)
SELECT issue_id, date_bin('6 hours', hour, TIMESTAMPTZ '2000-01-01 00:00+00'), sum(count)
FROM webapp_incidenthour GROUP BY 1, 2
"""
VACUUM_SOONER = (
    "ALTER TABLE {table} SET (autovacuum_vacuum_scale_factor = 0.01,"
    " autovacuum_vacuum_insert_scale_factor = 0.01)"
)
VACUUM_DEFAULT = (
    "ALTER TABLE {table} RESET (autovacuum_vacuum_scale_factor,"
    " autovacuum_vacuum_insert_scale_factor)"
)


class Migration(migrations.Migration):
    dependencies = [
        ("webapp", "0004_incident_hour"),
    ]

    operations = [
        migrations.RunSQL("LOCK TABLE ingest_incident IN SHARE MODE", migrations.RunSQL.noop),
        migrations.CreateModel(
            name="IncidentSixHours",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("start", models.DateTimeField()),
                ("count", models.PositiveIntegerField(default=0)),
            ],
        ),
        migrations.RemoveConstraint(
            model_name="incidenthour",
            name="incident_hour_once",
        ),
        migrations.AlterField(
            model_name="incidenthour",
            name="issue",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="ingest.issue",
            ),
        ),
        migrations.AddConstraint(
            model_name="incidenthour",
            constraint=models.UniqueConstraint(
                fields=("issue", "hour"), include=("count",), name="incident_hour_once"
            ),
        ),
        migrations.AddField(
            model_name="incidentsixhours",
            name="issue",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="ingest.issue",
            ),
        ),
        migrations.AddConstraint(
            model_name="incidentsixhours",
            constraint=models.UniqueConstraint(
                fields=("issue", "start"), include=("count",), name="incident_six_hours_once"
            ),
        ),
        migrations.RunSQL(
            sql=[
                FUNCTION.format(body=HOURLY + SIX_HOURS),
                BACKFILL,
                VACUUM_SOONER.format(table="webapp_incidenthour"),
                VACUUM_SOONER.format(table="webapp_incidentsixhours"),
            ],
            reverse_sql=[
                FUNCTION.format(body=HOURLY),
                VACUUM_DEFAULT.format(table="webapp_incidenthour"),
            ],
        ),
    ]
