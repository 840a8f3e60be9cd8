"""Importing a team's folder of Markdown into the corpus directory the app loads.

``manage.py runbooks import DIR`` walks DIR (sub-folders too), parses each ``.md`` /
``.markdown`` page with the ordinary parser (front matter optional), and writes every page
that parses as ``<slug>.md`` in canonical form (front matter from the parsed fields, then
the body) into the imported-runbooks directory. Writing the parsed form rather than the
original bytes makes a re-import of unchanged pages byte-identical, so the corpus version
does not move, and keeps the title a page got from its file name. A page that cannot be
used is reported with its path and the reason, and the others are imported all the same:
one odd page in a wiki export should not block the rest.

Pure filesystem work: no Django, so tests and the command share it as is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from rca.corpus.chunking import chunk_runbook
from rca.corpus.files import is_folder_readme, parse_runbook, read_text
from rca.corpus.runbook import Runbook, RunbookError

__all__ = ["MAX_FILE_BYTES", "ImportReport", "Imported", "Skipped", "canonical_text", "import_dir"]

#: A runbook page larger than this is skipped: no page a person writes is this long, and
#: chunking and embedding a data dump would cost the worker minutes.
MAX_FILE_BYTES = 1024 * 1024
_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True)
class Imported:
    path: str
    slug: str
    title: str
    failure_class: str
    chunks: int
    status: str = "new"  # or "changed" / "unchanged": what this import did to the stored page


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass
class ImportReport:
    imported: list[Imported] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # slugs dropped by ``replace``


def _pages(directory: Path) -> list[Path]:
    """Markdown files under ``directory``, sorted; hidden files and folders are left out
    (``.git``, editor swap files) and symbolic links are not followed."""
    found: list[Path] = []
    for root, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith(".") and name.lower().endswith(_SUFFIXES):
                found.append(Path(root) / name)
    return sorted(found)


def canonical_text(rb: Runbook) -> str:
    """The runbook as a file in our format: the fields it has, then its body."""
    meta: dict[str, object] = {"slug": rb.slug, "title": rb.title}
    if rb.failure_class:
        meta["failure_class"] = rb.failure_class
    for key in ("frameworks", "signals", "tags", "sources"):
        values = list(getattr(rb, key))
        if values:
            meta[key] = values
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n{rb.body}"


def _parse(path: Path) -> Runbook | Skipped:
    shown = str(path)
    if path.is_symlink():
        return Skipped(shown, "symbolic link, not followed")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        return Skipped(shown, f"{size} bytes, larger than the {MAX_FILE_BYTES} allowed")
    try:
        return parse_runbook(read_text(path), source=shown)
    except RunbookError as exc:
        return Skipped(shown, f"field '{exc.field}': {exc.problem}")


def import_dir(
    directory: Path, target: Path, *, taken: Mapping[str, str] = {}, replace: bool = False
) -> ImportReport:
    """Import every Markdown page under ``directory`` into ``target`` as ``<slug>.md``.

    ``taken`` maps slugs that already belong to other runbooks (the bundled ones) to where
    they come from; a page whose slug is taken is skipped, never overwrites. With
    ``replace``, runbooks imported earlier that this import did not write are removed.
    """
    if not directory.is_dir():
        raise RunbookError(str(directory), "directory", "not a directory")
    target.mkdir(parents=True, exist_ok=True)
    report = ImportReport()
    owners: dict[str, str] = {}
    for path in _pages(directory):
        if is_folder_readme(path):
            reason = "a README describes its folder, not a failure; rename it to import it"
            report.skipped.append(Skipped(str(path), reason))
            continue
        parsed = _parse(path)
        if isinstance(parsed, Skipped):
            report.skipped.append(parsed)
            continue
        chunks = len(chunk_runbook(parsed))
        if not chunks:
            report.skipped.append(Skipped(str(path), "no text besides its title"))
            continue
        owner = owners.get(parsed.slug) or taken.get(parsed.slug)
        if owner:
            reason = f"slug {parsed.slug!r} is already used by {owner}; rename one of them"
            report.skipped.append(Skipped(str(path), reason))
            continue
        owners[parsed.slug] = str(path)
        text = canonical_text(parsed)
        file = target / f"{parsed.slug}.md"
        before = file.read_text(encoding="utf-8") if file.exists() else None
        if before != text:
            file.write_text(text, encoding="utf-8")
        status = "new" if before is None else "unchanged" if before == text else "changed"
        report.imported.append(
            Imported(str(path), parsed.slug, parsed.title, parsed.failure_class, chunks, status)
        )
    if replace:
        for stale in sorted(target.glob("*.md")):
            if stale.stem not in owners:
                stale.unlink()
                report.removed.append(stale.stem)
    return report
