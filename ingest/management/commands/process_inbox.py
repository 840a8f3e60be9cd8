"""`manage.py process_inbox`: store what the API and Sentry endpoints accepted (ingest/inbox/).

Run one or more next to the web servers (`make run` supervises one; docker-compose runs the
`processor` service). Stops cleanly on SIGTERM.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from ingest.inbox.runner import Runner

log = logging.getLogger("ingest.inbox.runner")


class Command(BaseCommand):
    help = "Process the ingest inbox: scrub, parse, group and store accepted incidents."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--poll",
            type=float,
            default=settings.RCA_INBOX_POLL,
            help="Seconds between looks when no notification came (RCA_INBOX_POLL).",
        )
        parser.add_argument(
            "--batch",
            type=int,
            default=settings.RCA_INBOX_BATCH,
            help="Rows stored per transaction (RCA_INBOX_BATCH).",
        )
        parser.add_argument(
            "--fresh-batch",
            type=int,
            default=settings.RCA_INBOX_FRESH_BATCH,
            help="While a backlog exists, the newest rows also stored per batch, so a new "
            "failure is not stored after a whole storm (RCA_INBOX_FRESH_BATCH; 0: oldest only).",
        )
        parser.add_argument(
            "--alive-file",
            type=Path,
            default=None,
            help="Touched at every turn of the loop, for a container health check.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        runner = Runner(
            options["poll"], options["batch"], options["alive_file"], options["fresh_batch"]
        )
        runner.stop_on_signals()
        log.info("processing the inbox (notified, else every %s s)", options["poll"])
        runner.run()
        log.info("stopped")
