"""The per-key token bucket in PostgreSQL, driven by concurrent callers as the web workers do."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from ingest import ratelimit

pytestmark = pytest.mark.django_db(transaction=True)


def _take_concurrently(key: str, callers: int, cost: int = 1) -> list[bool]:
    barrier = threading.Barrier(callers)
    allowed: list[bool] = []

    def call() -> None:
        barrier.wait()
        try:
            allowed.append(ratelimit.take(key, cost).allowed)
        finally:
            connection.close()

    threads = [threading.Thread(target=call) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return allowed


def test_concurrent_first_requests_all_pass_and_never_overspend(settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 0.001  # no refill worth counting during the test
    settings.RCA_RATE_LIMIT_BURST = 20
    assert _take_concurrently("key:new", 8) == [True] * 8  # racing to create the bucket
    second = _take_concurrently("key:new", 16)
    assert second.count(True) == 12  # exactly the 20 - 8 tokens left, however they race


def test_a_cost_above_the_burst_never_passes_and_retry_after_counts_the_cost(settings):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 60  # one token a second
    settings.RCA_RATE_LIMIT_BURST = 10
    assert not ratelimit.take("key:big", 11).allowed  # not even on a fresh bucket
    assert ratelimit.take("key:big", 10).allowed
    refused = ratelimit.take("key:big", 5)
    assert not refused.allowed and 4 <= refused.retry_after <= 6


@pytest.fixture
def leases_of_ten(monkeypatch):
    """Leases of 10 tokens whatever the rate: a refill too slow to count keeps totals exact."""
    monkeypatch.setattr(ratelimit, "lease_size", lambda rate, cost: max(float(cost), 10.0))
    ratelimit.LEASES.clear()
    yield
    ratelimit.LEASES.clear()


def _bucket(key: str) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tokens FROM ingest_ratebucket WHERE key = %s", [key])
        return float(cursor.fetchone()[0])


def test_leased_tokens_never_overspend_however_threads_race(settings, leases_of_ten):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 0.001
    settings.RCA_RATE_LIMIT_BURST = 95
    first = _take_concurrently("key:lease", 16)
    assert first == [True] * 16
    # One statement per lease, not per request: at most one lease per racing thread.
    rest = _take_concurrently("key:lease", 32) + _take_concurrently("key:lease", 64)
    assert rest.count(True) == 95 - 16  # every token spent exactly once, leased or not
    assert not ratelimit.take("key:lease").allowed


def test_a_stale_lease_goes_back_to_the_shared_bucket(settings, leases_of_ten, monkeypatch):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 0.001
    settings.RCA_RATE_LIMIT_BURST = 50
    assert ratelimit.take("key:stale").allowed  # leases 10, spends 1
    assert _bucket("key:stale") == pytest.approx(40, abs=0.01)
    monkeypatch.setattr(ratelimit, "LEASE_SECONDS", 0.0)  # the lease is stale at once
    assert ratelimit.take("key:stale", 3).allowed  # gives back 9, leases 10, spends 3
    assert _bucket("key:stale") == pytest.approx(39, abs=0.01)
    monkeypatch.setattr(ratelimit, "LEASE_SECONDS", 60.0)
    assert all(ratelimit.take("key:stale").allowed for _ in range(7))  # from the lease
    assert _bucket("key:stale") == pytest.approx(39, abs=0.01)  # no statement for those


def test_a_refusal_keeps_what_the_lease_gave_back(settings, leases_of_ten):
    settings.RCA_RATE_LIMIT_PER_MINUTE = 0.001
    settings.RCA_RATE_LIMIT_BURST = 12
    assert ratelimit.take("key:back", 4).allowed  # leases 10, holds 6; 2 left shared
    refused = ratelimit.take("key:back", 9)  # 6 + 2 < 9: refused, the 6 go back
    assert not refused.allowed and refused.retry_after >= 1
    assert _bucket("key:back") == pytest.approx(8, abs=0.01)
    assert ratelimit.take("key:back", 8).allowed
