"""A failure posted after a storm is stored in the processor's next turn, not after it."""

from __future__ import annotations

import pytest

from ingest.inbox.accept import accept
from ingest.inbox.runner import Runner
from ingest.models import Incident
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)

OOM = {
    "service": "chat",
    "error_type": "torch.OutOfMemoryError",
    "message": "CUDA out of memory. Tried to allocate 2.00 GiB",
}


def _stored_after(fresh_batch: int, slug: str) -> int:
    """How many storm incidents were stored after the new failure, which came last."""
    project = project_with_key(slug).project
    for start in range(0, 600, 100):  # the storm, as a buffering client posts it
        accept(project, [shape_error(batch=1 + i % 8) for i in range(start, start + 100)])
    (new,) = accept(project, [OOM])
    Runner(poll=0.1, batch=100, fresh_batch=fresh_batch).once()  # the real processor's turn
    stored = Incident.objects.get(project=project, event_id=new.event_id)
    assert Incident.objects.filter(project=project).count() == 601  # all of the storm too
    return Incident.objects.filter(project=project, pk__gt=stored.pk).count()


def test_the_newest_rows_go_with_every_full_batch_while_a_backlog_exists(settings):
    settings.RCA_INGEST_INLINE = False  # as `make run`: the processor stores what was accepted
    assert _stored_after(fresh_batch=10, slug="fresh-first") >= 450  # stored in the first turn
    assert _stored_after(fresh_batch=0, slug="oldest-first") == 0  # strictly FIFO: stored last
