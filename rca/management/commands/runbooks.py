"""`manage.py runbooks load [DIR] [--embed-now]` / `runbooks list`: manage the runbook corpus.

After a load, chunks without embeddings are embedded by a worker (`embed_corpus`, queued
once the load commits), or here with `--embed-now` (this process then loads the model).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from rca.corpus import files
from rca.corpus.embeddings import chunks_missing_embeddings
from rca.corpus.store import load_runbooks
from rca.models import Runbook


class Command(BaseCommand):
    help = "Load the runbook corpus from a directory (default: the bundled one) or list it."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        load = sub.add_parser("load", help="upsert runbooks by slug; remove deleted ones")
        load.add_argument("directory", nargs="?", type=Path, default=None)
        load.add_argument(
            "--embed-now",
            action="store_true",
            help="embed missing chunks in this process instead of queueing it for a worker",
        )
        sub.add_parser("list", help="list stored runbooks")

    def handle(
        self,
        *args: str,
        action: str,
        directory: Path | None = None,
        embed_now: bool = False,
        **options: Any,
    ) -> None:
        if action == "list":
            for rb in Runbook.objects.order_by("failure_class", "slug"):
                self.stdout.write(f"{rb.failure_class:28} {rb.slug:45} {rb.chunks.count()} chunks")
            return
        try:
            report = load_runbooks(directory)
        except files.RunbookError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"runbooks: {len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.removed)} removed; "
            f"corpus version {report.version[:12]}"
        )
        if embed_now:
            from rca.corpus.embeddings import embed_missing_chunks

            self.stdout.write(f"embedded {embed_missing_chunks()} chunks")
        elif report.changed or chunks_missing_embeddings():
            from rca.queue.tasks import embed_corpus

            embed_corpus.delay_on_commit()
            self.stdout.write("queued embed_corpus for a worker")
