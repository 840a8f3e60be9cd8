"""`make run` says "ready" once a worker answered, the web listens and the corpus is embedded.

The corpus used to be waited for only because the worker's first ping was queued behind
`embed_corpus`; now it is a condition of its own (webapp/readiness.py).
"""

from __future__ import annotations

import threading

import pytest
from django.utils import timezone

from rca.corpus.store import load_runbooks
from tests.support.corpus import store_embedded_runbooks
from webapp import heartbeat, readiness

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_worker_that_answered_is_not_enough_while_the_corpus_waits_for_embedding() -> None:
    since = timezone.now()
    load_runbooks()  # stored, not embedded: what a first start has before the worker's job
    heartbeat.record("general@test")  # a worker answered, e.g. a ping not behind the job
    said: list[str] = []
    stop = threading.Event()

    def slow(message: str) -> None:
        said.append(message)
        stop.set()

    assert readiness.wait_until_started(since, lambda: True, stop, slow, slow_after=0) is None
    assert said == ["still starting after 0 s; waiting for the corpus embedding"]

    store_embedded_runbooks()
    checks = readiness.wait_until_started(since, lambda: True, threading.Event(), said.append)
    assert checks is not None and checks["database"]["ok"]
    assert checks["worker"]["detail"].startswith("general@test answered")
