"""gunicorn settings shared by every runner (`make run`, docker-compose, tests): hooks only;
the command line keeps binding, workers and logging where each runner can see them."""

from __future__ import annotations

from typing import Any


def child_exit(server: Any, worker: Any) -> None:
    """A worker ended: its live gauges leave /metrics (counters stay summed in)."""
    from ingest.metrics import mark_process_dead

    mark_process_dead(worker.pid)
