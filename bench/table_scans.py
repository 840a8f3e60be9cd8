"""Rows of the incidents table read by sequential scans (bench/ingest.py reports the delta).

A per-request cost that grows with the table shows here first: on 2026-12-06 the inbox
INSERT's plan, cached while `ingest_incident` was empty, read the whole table on every
commit (3.2M rows in one `BENCH_STORM=0` run; `ingest/plan_cache.py` fixed it). Planned per
execution, a run reads ~0.25M, from the ORM's plans while the table is small.
"""

from __future__ import annotations

import time


def incident_rows_scanned(settle: float = 0.0) -> int:
    """`seq_tup_read` of `ingest_incident` since the cluster began, after `settle` seconds
    (backends report their table statistics within a second of going idle)."""
    from django.db import connection

    time.sleep(settle)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = %s",
            ["ingest_incident"],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0
