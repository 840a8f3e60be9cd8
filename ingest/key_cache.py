"""What a web process remembers of live keys, so that ingest can go on while the database is away.

While the database answers, an entry decides only within RCA_KEY_TRUST_SECONDS (2 s) of
the database saying the key was live (`keys.trust_seconds`): after that the database is
asked again, so a revocation or a rotated DSN made by another process holds within that
long (the revoking process forgets the key at once). When the query fails with a
connection error, a key known live within RCA_KEY_CACHE_SECONDS is accepted (its
incidents go to the spool), any other raises `Unverifiable`, answered 503 with
Retry-After. Never 401, since the key may be valid, and never 202, since nobody could
check it.

No secret is kept: an API key is checked against the SHA-256 of its secret (what its
database row holds), a DSN key against the SHA-256 of the public key; the values are the
rows a request reads anyway (the key and its project). Every successful check against the
database refreshes its entry, and once a minute (RCA_KEY_CACHE_RELOAD_SECONDS) the whole
cache is reloaded from the database (`due`/`replace`, and a daemon thread per web process,
`keys.keep_warm`): API keys used by any process within the window (their `last_used_at`)
and every project's current DSN key. The reload is what makes a gunicorn worker that has
never seen a client accept it during an outage as its siblings do, and it drops keys
revoked or rotated since: a key revoked in the database is accepted during an outage only
if that outage began within a reload interval of the revocation (docs/SECURITY.md).
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db import InterfaceError, OperationalError

T = TypeVar("T")

#: The errors that mean "the database is away" (as webapp/database_down.py reads them),
#: as opposed to a query that is wrong.
DATABASE_AWAY = (OperationalError, InterfaceError)


def reload_seconds() -> float:
    """Seconds between reloads of the whole cache from the database
    (RCA_KEY_CACHE_RELOAD_SECONDS, a minute by default)."""
    from django.conf import settings

    return float(getattr(settings, "RCA_KEY_CACHE_RELOAD_SECONDS", 60.0))


#: Seconds a client refused with 503 is asked to wait (as for a full spool).
RETRY_AFTER = 30
#: Entries kept at most per cache; the reload keeps the most recently used keys.
MAX_ENTRIES = 10_000


class Unverifiable(Exception):
    """The database is away and this key was not known live recently: it may be valid."""

    retry_after = RETRY_AFTER

    def __init__(self, what: str = "API key") -> None:
        super().__init__(
            f"the database is unavailable and this {what} has not been used recently, so it"
            f" cannot be checked now; retry in {RETRY_AFTER} s"
        )


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A key known live: its secret's hash, what it authenticates as, and when it was."""

    secret_hash: str
    value: T
    seen_at: float  # time.time() of the last time the database said it was live


class KeyCache(Generic[T]):
    """Entries by lookup id (an API key's prefix; a project id with its DSN key's hash)."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry[T]] = {}
        self._lock = threading.Lock()
        self._loaded_at = float("-inf")

    def remember(self, ident: str, secret_hash: str, value: T) -> None:
        with self._lock:
            if ident not in self._entries and len(self._entries) >= MAX_ENTRIES:
                oldest = min(self._entries, key=lambda i: self._entries[i].seen_at)
                del self._entries[oldest]
            self._entries[ident] = Entry(secret_hash, value, time.time())

    def forget(self, ident: str) -> None:
        with self._lock:
            self._entries.pop(ident, None)

    def recall(self, ident: str, window: float) -> Entry[T] | None:
        """The entry if the database said it was live within the last `window` seconds."""
        entry = self._entries.get(ident)
        if entry is None or time.time() - entry.seen_at > window:
            return None
        return entry

    def due(self) -> bool:
        """True (once per `reload_seconds()`, to one caller) when a reload should run."""
        now = time.monotonic()
        with self._lock:
            if now - self._loaded_at < reload_seconds():
                return False
            self._loaded_at = now
            return True

    def replace(self, entries: dict[str, Entry[T]]) -> None:
        """Everything the database says is live now, instead of what was remembered."""
        with self._lock:
            self._entries = dict(list(entries.items())[:MAX_ENTRIES])

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._loaded_at = float("-inf")

    def __len__(self) -> int:
        return len(self._entries)
