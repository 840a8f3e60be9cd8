"""Shared bench setup: a cluster of its own under .data/bench, Django configured, migrated."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

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
