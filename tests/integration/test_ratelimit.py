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
