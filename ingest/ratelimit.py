"""Per-key rate limit: a token bucket refilled continuously, updated in one SQL statement.

The bucket lives in PostgreSQL so any number of web processes share it; a single
conditional UPDATE both refills and spends, so concurrent requests cannot overspend.
The common case (bucket exists, tokens left) is that one statement in autocommit, with
`synchronous_commit` off for its own transaction only: one round trip, no WAL-flush wait
(a token lost in a crash is harmless).

While the database is away, `take` spends from a bucket in this process's memory with
the same rate and burst (`LocalBuckets`), so the limit still holds per web process during
an outage (N processes could then let N times the rate through between them), and the
spool is not filled faster than a key may send.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction

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


class LocalBuckets:
    """Token buckets in this process's memory, for when the shared ones cannot be reached."""

    MAX_KEYS = 10_000  # full: forget the fullest buckets (they would refill to burst anyway)

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}  # key: tokens, at (monotonic)
        self._lock = threading.Lock()

    def take(self, key: str, cost: int, rate: float, burst: float) -> Decision:
        now = time.monotonic()
        with self._lock:
            tokens, at = self._buckets.get(key, (burst, now))
            tokens = min(burst, tokens + rate * (now - at))
            if tokens >= cost:
                self._remember(key, tokens - cost, now)
                return Decision(True)
            self._remember(key, tokens, now)
        wait = (cost - tokens) / rate
        return Decision(False, retry_after=max(1, int(wait + 0.999)))

    def _remember(self, key: str, tokens: float, now: float) -> None:
        if key not in self._buckets and len(self._buckets) >= self.MAX_KEYS:
            for full in sorted(self._buckets, key=lambda k: -self._buckets[k][0])[:1000]:
                del self._buckets[full]
        self._buckets[key] = (tokens, now)

    def clear(self) -> None:
        with self._lock:
            self._buckets.clear()


LOCAL = LocalBuckets()


def take(key: str, cost: int = 1) -> Decision:
    """Spend `cost` tokens of `key`'s bucket (RCA_RATE_LIMIT_PER_MINUTE, RCA_RATE_LIMIT_BURST).

    A batch of N incidents costs N tokens, so batching changes the round trips, not the
    limit. The bucket is the database's; this process's own while the database is away.
    """
    per_minute = float(settings.RCA_RATE_LIMIT_PER_MINUTE)
    if per_minute <= 0:
        return Decision(True)
    try:
        return _take_shared(key, cost, per_minute / 60.0)
    except (OperationalError, InterfaceError):
        return LOCAL.take(key, cost, per_minute / 60.0, burst())


def _take_shared(key: str, cost: int, rate: float) -> Decision:
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
