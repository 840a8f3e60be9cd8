"""The 30-day chart's rollup (webapp.models.IncidentDay), kept by the hourly trigger.

One row per issue and UTC day holding four six-hour counts: 55,800 rows for the million
instead of 292,000 hourly ones (or 138,600 rows of one six-hour count each, which summed
in twice the time). The trigger function of 0004 gains a second grouped upsert (one per
INSERT statement, like the first), and the new table is backfilled from the hourly rollup
rather than the incidents: the hourly rows are fewer, and they still count incidents
retention deleted. The incident table is locked against inserts (SHARE) first, so no insert
falls between the backfill's snapshot and the new trigger taking effect at commit, and none
waits on a rollup lock while holding the incident table's (no deadlock with the trigger).

Both unique indexes carry the counts (INCLUDE) so the chart's sums are index-only scans;
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
FUNCTION = """
CREATE OR REPLACE FUNCTION webapp_incident_hour_count() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
{body}
    RETURN NULL;
END
$$
"""
BACKFILL = "INSERT INTO webapp_incidentday (issue_id, day, h00, h06, h12, h18)" + (
    DAILY_ROWS.format(
        at="hour", n="sum(count)", q=QUARTER.format(at="hour"), source="webapp_incidenthour"
    )
)
VACUUM_SOONER = (
    "ALTER TABLE {table} SET (autovacuum_vacuum_scale_factor = 0.01,"
    " autovacuum_vacuum_insert_scale_factor = 0.01)"
)
VACUUM_DEFAULT = (
    "ALTER TABLE {table} RESET (autovacuum_vacuum_scale_factor,"
    " autovacuum_vacuum_insert_scale_factor)"
)


def issue_key() -> models.ForeignKey:
    """The rollups' issue: no index of its own (the unique one starts with it)."""
    return models.ForeignKey(
        db_index=False,
        on_delete=django.db.models.deletion.CASCADE,
        related_name="+",
        to="ingest.issue",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("webapp", "0004_incident_hour"),
    ]

    operations = [
        migrations.RunSQL("LOCK TABLE ingest_incident IN SHARE MODE", migrations.RunSQL.noop),
        migrations.RemoveConstraint(model_name="incidenthour", name="incident_hour_once"),
        migrations.AlterField(model_name="incidenthour", name="issue", field=issue_key()),
        migrations.AddConstraint(
            model_name="incidenthour",
            constraint=models.UniqueConstraint(
                fields=("issue", "hour"), include=("count",), name="incident_hour_once"
            ),
        ),
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
                ("issue", issue_key()),
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
            sql=[
                FUNCTION.format(body=HOURLY + DAILY),
                BACKFILL,
                VACUUM_SOONER.format(table="webapp_incidenthour"),
                VACUUM_SOONER.format(table="webapp_incidentday"),
            ],
            reverse_sql=[
                FUNCTION.format(body=HOURLY),
                VACUUM_DEFAULT.format(table="webapp_incidenthour"),
            ],
        ),
    ]
