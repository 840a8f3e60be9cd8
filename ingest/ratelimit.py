"""Per-key rate limit: a token bucket refilled continuously, updated in one SQL statement.

The bucket lives in PostgreSQL so any number of web processes share it; a single
conditional UPDATE both refills and spends, so concurrent requests cannot overspend.
The common case (bucket exists, tokens left) is that one statement in autocommit, with
`synchronous_commit` off for its own transaction only: one round trip, no WAL-flush wait
(a token lost in a crash is harmless).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction

from ingest.models import RateBucket

_SPEND = f"""
UPDATE {RateBucket._meta.db_table}
   SET tokens = LEAST(%(burst)s, tokens + %(rate)s
                      * EXTRACT(EPOCH FROM clock_timestamp() - updated_at)) - %(cost)s,
       updated_at = clock_timestamp()
  FROM (SELECT set_config('synchronous_commit', %(sync)s, true)) AS _this_transaction
 WHERE key = %(key)s
   AND LEAST(%(burst)s, tokens + %(rate)s * EXTRACT(EPOCH FROM clock_timestamp() - updated_at))
       >= %(cost)s
RETURNING tokens
"""  # noqa: S608 - the table name is ours; values are parameters

_CREATE = f"""
INSERT INTO {RateBucket._meta.db_table} (key, tokens, updated_at)
SELECT %(key)s, %(burst)s - %(cost)s, clock_timestamp() WHERE %(cost)s <= %(burst)s
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


def burst() -> float:
    """The most tokens one request can ever spend (a batch larger than this never passes)."""
    return float(settings.RCA_RATE_LIMIT_BURST)


def take(key: str, cost: int = 1) -> Decision:
    """Spend `cost` tokens of `key`'s bucket (RCA_RATE_LIMIT_PER_MINUTE, RCA_RATE_LIMIT_BURST).

    A batch of N incidents costs N tokens, so batching changes the round trips, not the
    limit.
    """
    per_minute = float(settings.RCA_RATE_LIMIT_PER_MINUTE)
    if per_minute <= 0:
        return Decision(True)
    rate = per_minute / 60.0
    params: dict[str, str | float] = {
        "key": key,
        "rate": rate,
        "burst": burst(),
        "cost": cost,
        # Inside a caller's transaction the setting would cover the caller's writes too.
        "sync": "on" if connection.in_atomic_block else "off",
    }
    with connection.cursor() as cursor:
        cursor.execute(_SPEND, params)
        if cursor.fetchone() is not None:
            return Decision(True)
    with transaction.atomic(), connection.cursor() as cursor:  # first use, or out of tokens
        cursor.execute(_CREATE, params)
        if cursor.fetchone() is not None:
            return Decision(True)
        # A concurrent first request may have created the bucket meanwhile: spend again.
        cursor.execute(_SPEND, {**params, "sync": "on"})
        if cursor.fetchone() is not None:
            return Decision(True)
        cursor.execute(_LEVEL, params)
        row = cursor.fetchone()
    level = float(row[0]) if row else 0.0
    wait = max(cost - level, 0.0) / rate
    return Decision(False, retry_after=max(1, int(wait + 0.999)))
