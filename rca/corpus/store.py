"""Store the runbook corpus: upsert by slug, re-chunk what changed, delete what was removed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from rca.corpus import files
from rca.models import CorpusState, Runbook, RunbookChunk


@dataclass
class LoadReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    version: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.removed)


def _chunk_rows(row: Runbook, rb: files.Runbook) -> list[RunbookChunk]:
    return [
        RunbookChunk(runbook=row, ordinal=c.ordinal, section=c.section[:120], text=c.text)
        for c in files.chunk_runbook(rb)
    ]


def _write_chunks(row: Runbook, rb: files.Runbook) -> None:
    row.chunks.all().delete()
    RunbookChunk.objects.bulk_create(_chunk_rows(row, rb))


def _create(runbooks: list[tuple[files.Runbook, dict[str, Any]]]) -> None:
    """Insert new runbooks and their chunks in a few statements, not three per runbook:
    a fresh database (a new instance, each test that stores the corpus) creates them all
    (381 runbooks, 1,411 chunks: ~1,000 round trips before)."""
    rows = Runbook.objects.bulk_create(Runbook(slug=rb.slug, **fields) for rb, fields in runbooks)
    chunks = [
        chunk for row, (rb, _) in zip(rows, runbooks, strict=True) for chunk in _chunk_rows(row, rb)
    ]
    RunbookChunk.objects.bulk_create(chunks, batch_size=500)


def configured_runbooks() -> list[files.Runbook]:
    """The configured corpus: the bundled runbooks (unless ``RCA_BUNDLED_RUNBOOKS`` is off)
    and those `runbooks import` wrote to ``RCA_RUNBOOK_DIR``; a slug in both is an error."""
    from django.conf import settings

    runbooks: dict[str, files.Runbook] = {}
    if settings.RCA_BUNDLED_RUNBOOKS:
        runbooks.update((rb.slug, rb) for rb in files.load_directory(files.bundled_runbook_dir()))
    imported = Path(settings.RCA_RUNBOOK_DIR)
    if imported.is_dir():
        for rb in files.load_directory(imported):
            if rb.slug in runbooks:
                raise files.RunbookError(str(imported), "slug", f"{rb.slug!r} is also bundled")
            runbooks[rb.slug] = rb
    return [runbooks[slug] for slug in sorted(runbooks)]


@transaction.atomic
def load_runbooks(directory: Path | None = None) -> LoadReport:
    """Make the stored corpus equal to `directory` (default: :func:`configured_runbooks`)."""
    runbooks = files.load_directory(directory) if directory else configured_runbooks()
    report = LoadReport(version=files.corpus_version(runbooks))
    existing = {r.slug: r for r in Runbook.objects.all()}
    created: list[tuple[files.Runbook, dict[str, Any]]] = []
    for rb in runbooks:
        fields = {
            "title": rb.title,
            "failure_class": rb.failure_class,
            "frameworks": list(rb.frameworks),
            "signals": rb.signal_entries(),  # {regex, needs} where needed
            "tags": list(rb.tags),
            "body": rb.body,
            "checksum": rb.checksum,
        }
        row = existing.pop(rb.slug, None)
        if row is None:
            created.append((rb, fields))
            report.created.append(rb.slug)
            continue
        if row.checksum != rb.checksum:
            Runbook.objects.filter(pk=row.pk).update(**fields)
            report.updated.append(rb.slug)
        else:
            report.unchanged.append(rb.slug)
            continue
        _write_chunks(row, rb)
    _create(created)
    for slug, row in existing.items():
        row.delete()
        report.removed.append(slug)
    CorpusState.objects.update_or_create(pk=1, defaults={"version": report.version})
    return report


def current_version() -> str:
    state = CorpusState.objects.filter(pk=1).first()
    return state.version if state else ""
