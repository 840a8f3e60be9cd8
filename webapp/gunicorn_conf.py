"""gunicorn settings shared by every runner (`make run`, docker-compose, tests): hooks only;
the command line keeps binding, workers and logging where each runner can see them."""

from __future__ import annotations

from typing import Any


def post_worker_init(worker: Any) -> None:
    """Each worker keeps its cache of live keys warm, for ingest during a database outage,
    and writes the inbox from each request thread's own connection (ingest/inbox/write.py),
    or with group commit (ingest/inbox/committer.py) under RCA_INBOX_GROUP_COMMIT."""
    from django.conf import settings

    from ingest.inbox.write import enable_direct_commit, enable_group_commit
    from ingest.keys import keep_warm

    keep_warm()
    if settings.RCA_INBOX_GROUP_COMMIT:
        enable_group_commit(int(getattr(worker.cfg, "threads", 0) or 0))
    else:
        enable_direct_commit()


def child_exit(server: Any, worker: Any) -> None:
    """A worker ended: its live gauges leave /metrics (counters stay summed in)."""
    from ingest.metrics import mark_process_dead

    mark_process_dead(worker.pid)
