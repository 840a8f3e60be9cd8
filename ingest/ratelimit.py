"""Per-key rate limit: a token bucket refilled continuously, updated in one SQL statement.

The bucket lives in PostgreSQL so any number of web processes share it; a single
conditional UPDATE both refills and spends, so concurrent requests cannot overspend.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction

from ingest.models import RateBucket

_SPEND = f"""
UPDATE {RateBucket._meta.db_table}
   SET tokens = LEAST(%(burst)s,
                      tokens + %(rate)s * EXTRACT(EPOCH FROM clock_timestamp() - updated_at)) - 1,
       updated_at = clock_timestamp()
 WHERE key = %(key)s
   AND LEAST(%(burst)s, tokens + %(rate)s * EXTRACT(EPOCH FROM clock_timestamp() - updated_at)) >= 1
RETURNING tokens
"""  # noqa: S608 - the table name is ours; values are parameters

_CREATE = f"""
INSERT INTO {RateBucket._meta.db_table} (key, tokens, updated_at)
VALUES (%(key)s, %(burst)s - 1, clock_timestamp())
ON CONFLICT (key) DO NOTHING
RETURNING tokens
"""  # noqa: S608

_LEVEL = f"""
SELECT LEAST(%(burst)s, tokens + %(rate)s * EXTRACT(EPOCH FROM clock_timestamp() - updated_at))
  FROM {RateBucket._meta.db_table} WHERE key = %(key)s
"""  # noqa: S608


@dataclass
class Decision:
    allowed: bool
    retry_after: int = 0  # whole seconds until one token is back


def take(key: str) -> Decision:
    """Spend one token of `key`'s bucket (RCA_RATE_LIMIT_PER_MINUTE, RCA_RATE_LIMIT_BURST)."""
    per_minute = float(settings.RCA_RATE_LIMIT_PER_MINUTE)
    if per_minute <= 0:
        return Decision(True)
    rate = per_minute / 60.0
    params: dict[str, str | float] = {
        "key": key,
        "rate": rate,
        "burst": float(settings.RCA_RATE_LIMIT_BURST),
    }
    with transaction.atomic(), connection.cursor() as cursor:
        # A lost token after a crash is harmless: do not wait for the WAL flush.
        cursor.execute("SET LOCAL synchronous_commit TO OFF")
        cursor.execute(_SPEND, params)
        if cursor.fetchone() is not None:
            return Decision(True)
        cursor.execute(_CREATE, params)
        if cursor.fetchone() is not None:
            return Decision(True)
        cursor.execute(_LEVEL, params)
        row = cursor.fetchone()
    level = float(row[0]) if row else 0.0
    wait = max(1.0 - level, 0.0) / rate
    return Decision(False, retry_after=max(1, int(wait + 0.999)))
