"""Shared bench setup: a cluster of its own under .data/bench, Django configured, migrated."""

from __future__ import annotations

import os
import pstats
import socket
import sys
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def setup_django() -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("RCA_DATA_DIR", str(REPO / ".data" / "bench"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


def bench_incident(i: int) -> dict[str, Any]:
    """The incident every ingest bench posts: one failure, varied batch, service and file.

    One definition, so bench/ingest.py, request_cpu.py and process_cpu.py measure the same
    payload (their figures are compared with each other in the README)."""
    batch = 1 + i % 64
    message = f"mat1 and mat2 shapes cannot be multiplied ({batch}x256 and 512x10)"
    return {
        "event_id": uuid.uuid4().hex,  # as SDKs send one
        "service": f"svc-{i % 5}",
        "error_type": "RuntimeError",
        "message": message,
        "stacktrace": (
            "Traceback (most recent call last):\n"
            f'  File "/srv/app/model_{i % 7}.py", line 41, in forward\n'
            "    return self.head(x)\n"
            f"RuntimeError: {message}"
        ),
        "logs": [f"ERROR step={i} trace_id=t{i} error_code=E_SHAPE"],
        "inference_context": {"model_id": "ranker-v3", "batch_size": batch},
    }


def print_profile(prof: Any) -> None:
    """Print a cProfile's top (BENCH_SORT, BENCH_TOP) the way every CPU bench does."""
    stats = pstats.Stats(prof).strip_dirs()
    stats.sort_stats(os.environ.get("BENCH_SORT", "tottime"))
    stats.print_stats(int(os.environ.get("BENCH_TOP", "40")))
