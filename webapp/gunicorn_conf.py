"""gunicorn settings shared by every runner (`make run`, docker-compose, tests): hooks only;
the command line keeps binding, workers and logging where each runner can see them."""

from __future__ import annotations

from typing import Any


def post_worker_init(worker: Any) -> None:
    """Each worker keeps its cache of live keys warm, for ingest during a database outage,
    and writes the inbox with group commit (ingest/inbox/committer.py)."""
    from ingest.inbox.write import enable_group_commit
    from ingest.keys import keep_warm

    keep_warm()
    enable_group_commit(int(getattr(worker.cfg, "threads", 0) or 0))


def child_exit(server: Any, worker: Any) -> None:
    """A worker ended: its live gauges leave /metrics (counters stay summed in)."""
    from ingest.metrics import mark_process_dead

    mark_process_dead(worker.pid)
