"""`manage.py runbooks load [DIR] | import DIR | list | ship-vectors`: manage the corpus.

`import DIR` brings a team's folder of Markdown (sub-folders too; front matter optional)
into ``RCA_RUNBOOK_DIR`` (:mod:`rca.corpus.importing`), reports each page as imported or
skipped with the reason, then loads the configured corpus: the bundled runbooks plus the
imported ones, as `load` without DIR and `make run` do. After a load, chunks without
embeddings are embedded by a worker (`embed_corpus`, queued once the load commits), or
here with `--embed-now` (this process then loads the model).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from rca.corpus import files
from rca.corpus.embeddings import chunks_missing_embeddings
from rca.corpus.importing import ImportReport, import_dir
from rca.corpus.store import LoadReport, load_runbooks
from rca.models import Runbook


class Command(BaseCommand):
    help = (
        "Load the runbook corpus (default: the bundled runbooks plus imported ones), import "
        "a folder of Markdown, or list the stored runbooks."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        load = sub.add_parser("load", help="upsert runbooks by slug; remove deleted ones")
        load.add_argument("directory", nargs="?", type=Path, default=None)
        imp = sub.add_parser(
            "import", help="import a folder of Markdown pages (recursively), then load"
        )
        imp.add_argument("directory", type=Path)
        imp.add_argument(
            "--replace",
            action="store_true",
            help="remove runbooks imported earlier that are not in this folder",
        )
        for command in (load, imp):
            command.add_argument(
                "--embed-now",
                action="store_true",
                help="embed missing chunks in this process instead of queueing it for a worker",
            )
        sub.add_parser("list", help="list stored runbooks")
        sub.add_parser(
            "ship-vectors",
            help="write the bundled runbooks' vectors to rca/corpus/shipped-vectors.npz "
            "(after editing bundled runbooks; only new chunk texts run the model)",
        )

    def handle(
        self,
        *args: str,
        action: str,
        directory: Path | None = None,
        embed_now: bool = False,
        replace: bool = False,
        **options: Any,
    ) -> None:
        if action == "ship-vectors":
            from rca.corpus.shipped_vectors import SHIPPED_PATH
            from rca.corpus.shipping import ship_bundled

            self.stdout.write(f"{ship_bundled()} chunk vectors written to {SHIPPED_PATH}")
            return
        if action == "list":
            for rb in Runbook.objects.order_by("failure_class", "slug"):
                cls = rb.failure_class or "-"
                self.stdout.write(f"{cls:28} {rb.slug:45} {rb.chunks.count()} chunks")
            return
        try:
            if action == "import":
                assert directory is not None
                self._report_import(self._import(directory, replace))
                report = load_runbooks()
            else:
                report = load_runbooks(directory)
        except files.RunbookError as exc:
            raise CommandError(str(exc)) from exc
        self._report_load(report, embed_now)

    def _import(self, directory: Path, replace: bool) -> ImportReport:
        taken: dict[str, str] = {}
        if settings.RCA_BUNDLED_RUNBOOKS:
            bundled = files.load_directory(files.bundled_runbook_dir())
            taken = {rb.slug: "a bundled runbook" for rb in bundled}
        return import_dir(directory, Path(settings.RCA_RUNBOOK_DIR), taken=taken, replace=replace)

    def _report_import(self, report: ImportReport) -> None:
        for page in report.imported:
            cls = page.failure_class or "no failure class"
            self.stdout.write(
                f"imported {_shown(page.path)} -> {page.slug} ({page.status}; "
                f"{page.title!r}; {cls}; {page.chunks} chunks)"
            )
        for skipped in report.skipped:
            self.stdout.write(f"skipped  {_shown(skipped.path)}: {skipped.reason}")
        for slug in report.removed:
            self.stdout.write(f"removed  {slug} (not in this folder; --replace)")
        self.stdout.write(
            f"{len(report.imported)} imported, {len(report.skipped)} skipped, "
            f"{len(report.removed)} removed; into {settings.RCA_RUNBOOK_DIR}"
        )

    def _report_load(self, report: LoadReport, embed_now: bool) -> None:
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


def _shown(path: str) -> str:
    """A file name as typed, or quoted with escapes when it holds control characters (a
    name is the folder owner's, but should not be able to drive the terminal)."""
    return path if path.isprintable() else repr(path)
