"""The processor lingers between claims while incidents stream in, and only then
(`ingest/inbox/runner.py`, LINGER): a trickle is stored at once, a stream in larger claims."""

from __future__ import annotations

import time

import pytest

from ingest.inbox import runner as runner_module
from ingest.inbox.accept import accept
from ingest.inbox.runner import LINGER, Runner
from ingest.models import InboxItem, Incident
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)


def _turn(slug: str, rows: int, since_last_claim: float, linger: float = LINGER) -> list[float]:
    """Accept `rows` incidents, as if the processor's last claim began `since_last_claim`
    seconds ago; one turn of the real processor; the pauses it took before its next claim."""
    project = project_with_key(slug).project
    accept(project, [shape_error(batch=1 + i % 8) for i in range(rows)])
    runner = Runner(poll=0.1, batch=100, linger=linger)
    runner._claimed_at = time.monotonic() - since_last_claim
    pauses: list[float] = []

    def pause(timeout: float | None = None) -> bool:
        pauses.append(float(timeout or 0))
        return False

    runner.stop.wait = pause  # type: ignore[method-assign]
    assert runner.once() == rows
    assert Incident.objects.filter(project=project).count() == rows  # all stored in the turn
    assert not InboxItem.objects.filter(project=project).exists()
    return pauses


def test_a_stream_is_claimed_at_most_every_linger_seconds(settings):
    settings.RCA_INGEST_INLINE = False  # as `make run`: the processor stores what was accepted
    assert runner_module.LINGER_RATE <= 30 / 0.05  # 30 rows since a claim 50 ms ago: 600/s
    (pause,) = _turn("linger-stream", 30, 0.05)
    assert 0 <= pause <= LINGER


def test_a_trickle_is_stored_without_a_pause(settings):
    settings.RCA_INGEST_INLINE = False
    assert _turn("linger-trickle", 3, 1.0) == []  # 3/s: stored at once, no pause after


def test_no_pause_with_lingering_off(settings):
    settings.RCA_INGEST_INLINE = False
    assert _turn("linger-off", 30, 0.05, linger=0) == []
