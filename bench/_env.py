"""Shared bench setup: a cluster of its own under .data/bench, Django configured, migrated."""

from __future__ import annotations

import os
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
