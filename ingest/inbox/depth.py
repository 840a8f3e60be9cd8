"""How much waits in the inbox, for /metrics (`ingest/metrics.py` declares the gauges): an
aggregate over a table that stays small (rows live milliseconds; a storm or a stopped
processor is what makes it grow)."""

from __future__ import annotations

from django.db import connection

# The table by name, not through the model: `ingest.metrics` imports this module, and the
# gunicorn master imports `ingest.metrics` without Django's app registry.
_TABLE = "ingest_inboxitem"
_BY_STATE = f"""
SELECT count(*) FILTER (WHERE failed_at IS NULL), count(*) FILTER (WHERE failed_at IS NOT NULL)
  FROM {_TABLE}
"""  # noqa: S608 - the table name is ours
# The oldest row by id is the oldest accepted: the primary key answers without a scan.
_OLDEST = f"""
SELECT EXTRACT(EPOCH FROM now() - received_at) FROM {_TABLE}
 WHERE failed_at IS NULL ORDER BY id LIMIT 1
"""  # noqa: S608


def _one(sql: str) -> tuple[float, ...]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        row = cursor.fetchone()
    return tuple(float(v) for v in row) if row else ()


def by_state(_scrape: object = None) -> dict[tuple[str, ...], float]:
    """Rows waiting for the processor, and rows that failed to store (kept for an operator)."""
    waiting, failed = _one(_BY_STATE)
    return {("waiting",): waiting, ("failed",): failed}


def oldest(_scrape: object = None) -> dict[tuple[str, ...], float]:
    """Seconds since the oldest waiting row was accepted; 0 with none."""
    row = _one(_OLDEST)
    return {(): max(0.0, row[0]) if row else 0.0}
