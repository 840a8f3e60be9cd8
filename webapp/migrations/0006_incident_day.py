"""The 30-day chart reads one row per issue and day holding four six-hour counts
(webapp.models.IncidentDay) instead of one row per issue and six hours (0005): 55,800 rows
for the million instead of 138,600, summed in about half the time.

Same steps as 0005: the incident table locked against inserts (SHARE) first, the trigger
function's second upsert replaced, the new table backfilled from the hourly rollup (which
still counts incidents retention deleted), autovacuum told to keep its visibility map fresh
for the index-only sums. Reversed, 0005's table is refilled from the hourly rollup too.
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
# The quarter of the UTC day: 0 for 00-06 h, 1 for 06-12 h, 2 for 12-18 h, 3 for 18-24 h.
QUARTER = "(extract(hour FROM {at} AT TIME ZONE 'UTC')::int / 6)"
DAILY_ROWS = """
    SELECT issue_id, date_trunc('day', {at}, 'UTC'),
           coalesce({n} FILTER (WHERE {q} = 0), 0), coalesce({n} FILTER (WHERE {q} = 1), 0),
           coalesce({n} FILTER (WHERE {q} = 2), 0), coalesce({n} FILTER (WHERE {q} = 3), 0)
    FROM {source} GROUP BY 1, 2
"""
DAILY = (
    """
    INSERT INTO webapp_incidentday (issue_id, day, h00, h06, h12, h18)"""
    + DAILY_ROWS.format(
        at="received_at", n="count(*)", q=QUARTER.format(at="received_at"), source="new_incidents"
    )
    + """    ON CONFLICT (issue_id, day) DO UPDATE SET
        h00 = webapp_incidentday.h00 + EXCLUDED.h00, h06 = webapp_incidentday.h06 + EXCLUDED.h06,
        h12 = webapp_incidentday.h12 + EXCLUDED.h12, h18 = webapp_incidentday.h18 + EXCLUDED.h18;
"""
)
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
BACKFILL_DAILY = "INSERT INTO webapp_incidentday (issue_id, day, h00, h06, h12, h18)" + (
    DAILY_ROWS.format(
        at="hour",
        n="sum(count)",
        q=QUARTER.format(at="hour"),
        source="webapp_incidenthour",
    )
)
BACKFILL_SIX_HOURS = """
INSERT INTO webapp_incidentsixhours (issue_id, start, count)
SELECT issue_id, date_bin('6 hours', hour, TIMESTAMPTZ '2000-01-01 00:00+00'), sum(count)
FROM webapp_incidenthour GROUP BY 1, 2
"""
VACUUM_SOONER = (
    "ALTER TABLE webapp_incidentday SET (autovacuum_vacuum_scale_factor = 0.01,"
    " autovacuum_vacuum_insert_scale_factor = 0.01)"
)


class Migration(migrations.Migration):
    dependencies = [
        ("webapp", "0005_incident_six_hours"),
    ]

    operations = [
        migrations.RunSQL("LOCK TABLE ingest_incident IN SHARE MODE", migrations.RunSQL.noop),
        migrations.CreateModel(
            name="IncidentDay",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateTimeField()),
                ("h00", models.PositiveIntegerField(default=0)),
                ("h06", models.PositiveIntegerField(default=0)),
                ("h12", models.PositiveIntegerField(default=0)),
                ("h18", models.PositiveIntegerField(default=0)),
                (
                    "issue",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="ingest.issue",
                    ),
                ),
            ],
        ),
        migrations.AddConstraint(
            model_name="incidentday",
            constraint=models.UniqueConstraint(
                fields=("issue", "day"),
                include=("h00", "h06", "h12", "h18"),
                name="incident_day_once",
            ),
        ),
        migrations.RunSQL(
            sql=[FUNCTION.format(body=HOURLY + DAILY), BACKFILL_DAILY, VACUUM_SOONER],
            reverse_sql=[FUNCTION.format(body=HOURLY + SIX_HOURS), BACKFILL_SIX_HOURS],
        ),
        migrations.DeleteModel(
            name="IncidentSixHours",
        ),
    ]
