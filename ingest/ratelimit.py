"""Per-key rate limit: a token bucket refilled continuously, shared in PostgreSQL.

The bucket lives in PostgreSQL so any number of web processes share it; a single
conditional UPDATE both refills and spends, so concurrent requests cannot overspend.
A process does not spend one token per statement, though: it takes a *lease* of a few
(`lease_size`: 1/20 of the burst or a quarter second of the rate, whichever is less; at
least the request's cost) and spends them in memory (`Leases`), so a key sending at full
speed costs one statement per lease, not one per request (issue 19: a committed write per
request was a third of an ingest request's round trips). Tokens leased are spent from
the shared bucket when leased, so the processes together never spend more than it holds;
a lease unspent after LEASE_SECONDS goes back into the bucket with the next lease, so
idle tokens are not banked for a later burst. The cost: a key near its limit may be
refused by one process while another still holds up to a lease of its tokens (returned
at its next request or lost to the burst cap), and a process that exits drops what it
held. The statement runs in autocommit with `synchronous_commit` off for its own
transaction only: one round trip, no WAL-flush wait (a token lost in a crash is harmless).

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

#: Refill, give back what this process returns, and lease: `grant` tokens (the lease, or
#: all that is left if less) when at least `cost` are there; the row is locked first, so the
#: grant is computed from the newest row however requests race.
_LEASE = f"""
WITH b AS (
    SELECT key, LEAST(%(burst)s, tokens + %(returned)s + %(rate)s
                      * EXTRACT(EPOCH FROM clock_timestamp() - updated_at)) AS level
      FROM {RateBucket._meta.db_table}, (SELECT set_config('synchronous_commit', %(sync)s, true))
           AS _this_transaction
     WHERE key = %(key)s
       FOR UPDATE OF {RateBucket._meta.db_table}
), g AS (
    SELECT key, level, CASE WHEN level >= %(cost)s THEN LEAST(%(size)s, level) ELSE 0 END
           AS grant_
      FROM b
), u AS (
    UPDATE {RateBucket._meta.db_table} t
       SET tokens = g.level - g.grant_, updated_at = clock_timestamp()
      FROM g
     WHERE t.key = g.key AND (g.grant_ > 0 OR %(returned)s > 0)
)
SELECT grant_, level FROM g
"""  # noqa: S608 - the table name is ours; values are parameters

_CREATE = f"""
INSERT INTO {RateBucket._meta.db_table} (key, tokens, updated_at)
SELECT %(key)s, %(burst)s - %(size)s, clock_timestamp() WHERE %(cost)s <= %(burst)s
ON CONFLICT (key) DO NOTHING
RETURNING tokens
"""  # noqa: S608 - a new bucket: full, less the first lease


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

#: Seconds a lease is spent from; what is left then goes back with the next lease.
LEASE_SECONDS = 1.0


class Leases:
    """Tokens this process took from the shared buckets and has not spent yet."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[float, float]] = {}  # key: tokens, leased at (monotonic)
        self._lock = threading.Lock()

    def spend(self, key: str, cost: int) -> bool:
        """Spend `cost` from this key's lease if it holds that many and is not stale."""
        now = time.monotonic()
        with self._lock:
            tokens, at = self._held.get(key, (0.0, now))
            if tokens < cost or now - at > LEASE_SECONDS:
                return False
            self._held[key] = (tokens - cost, at)
            return True

    def give_back(self, key: str) -> float:
        """What the key's lease still holds, now no longer this process's to spend."""
        with self._lock:
            tokens, _ = self._held.pop(key, (0.0, 0.0))
            return tokens

    def add(self, key: str, tokens: float) -> None:
        """A new grant's remainder (after the request that took it spent its cost)."""
        if tokens <= 0:
            return
        now = time.monotonic()
        with self._lock:
            held, _ = self._held.get(key, (0.0, now))
            if len(self._held) >= LocalBuckets.MAX_KEYS and key not in self._held:
                return  # not kept: those tokens are spent, never overspent
            self._held[key] = (held + tokens, now)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()


LEASES = Leases()


def lease_size(rate: float, cost: int) -> float:
    """Tokens taken from the shared bucket at a time: 1/20 of the burst or a quarter second
    of the rate, whichever is less, and at least `cost` (never more than the burst)."""
    most = burst()
    return min(most, max(float(cost), min(most / 20.0, rate * LEASE_SECONDS / 4.0)))


def take(key: str, cost: int = 1) -> Decision:
    """Spend `cost` tokens of `key`'s bucket (RCA_RATE_LIMIT_PER_MINUTE, RCA_RATE_LIMIT_BURST).

    A batch of N incidents costs N tokens, so batching changes the round trips, not the
    limit. The bucket is the database's, spent through this process's lease; this
    process's own while the database is away.
    """
    per_minute = float(settings.RCA_RATE_LIMIT_PER_MINUTE)
    if per_minute <= 0:
        return Decision(True)
    if LEASES.spend(key, cost):
        return Decision(True)
    # One lease at a time per key in this process: the threads that found it empty
    # meanwhile spend from the one just taken, instead of each leasing its own.
    with _LEASING[hash(key) % len(_LEASING)]:
        if LEASES.spend(key, cost):
            return Decision(True)
        returned = LEASES.give_back(key)
        try:
            return _take_shared(key, cost, per_minute / 60.0, returned)
        except (OperationalError, InterfaceError):
            return LOCAL.take(key, cost, per_minute / 60.0, burst())


_LEASING = [threading.Lock() for _ in range(64)]


def _take_shared(key: str, cost: int, rate: float, returned: float) -> Decision:
    params: dict[str, str | float] = {
        "key": key,
        "rate": rate,
        "burst": burst(),
        "cost": cost,
        "size": lease_size(rate, cost),
        "returned": returned,
        # Inside a caller's transaction the setting would cover the caller's writes too.
        "sync": "on" if connection.in_atomic_block else "off",
    }
    with connection.cursor() as cursor:
        cursor.execute(_LEASE, params)
        row = cursor.fetchone()
    if row is None:  # no bucket yet: the first request of this key makes it
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_CREATE, params)
            created = cursor.fetchone()
            if created is not None:
                LEASES.add(key, float(params["size"]) - cost)
                return Decision(True)
            # A concurrent first request created the bucket meanwhile: lease from it.
            cursor.execute(_LEASE, {**params, "sync": "on"})
            row = cursor.fetchone()
        if row is None:  # cost above the burst: a bucket is never made for it
            return Decision(False, retry_after=max(1, int((cost - burst()) / rate + 0.999)))
    granted, level = float(row[0]), float(row[1])
    if granted > 0:
        LEASES.add(key, granted - cost)
        return Decision(True)
    wait = max(cost - level, 0.0) / rate
    return Decision(False, retry_after=max(1, int(wait + 0.999)))
