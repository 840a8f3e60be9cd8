"""`manage.py retention --days N [--dry-run]`: delete old incidents, keep issues and decisions.

The logic and what it keeps are in ingest/retention.py; this only parses and reports.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.retention import DEFAULT_BATCH, purge


class Command(BaseCommand):
    help = (
        "Delete incidents received more than --days days ago, in batches. Issues stay as "
        "they were; incidents an analysis or suggestion refers to, and incidents still "
        "waiting for analysis, are kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, required=True)
        parser.add_argument("--batch", type=int, default=DEFAULT_BATCH)
        parser.add_argument(
            "--dry-run", action="store_true", help="count what would go, delete nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = purge(options["days"], batch=options["batch"], dry_run=options["dry_run"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        verb = "would delete" if result.dry_run else "deleted"
        self.stdout.write(
            f"{verb} {result.deleted} incidents received more than {options['days']} days "
            f"ago; kept {result.kept_referenced} referenced by an analysis or suggestion "
            f"and {result.kept_waiting} still waiting for analysis"
        )
