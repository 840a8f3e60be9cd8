"""The runbook corpus on disk: parsing, validation, loading, versioning, signal matching.

Runbooks are Markdown files, with optional YAML front matter (see ``rca/runbooks`` and
docs/RUNBOOKS.md): a team's plain Markdown page loads as it is. Everything here is
pure (no Django, no database, no models) so that the web process, the Celery workers and the
tests can all load the corpus cheaply and agree on its version: the worker rebuilds its
in-memory BM25 index and re-embeds chunks only when :func:`corpus_version` changes.
The record itself is :mod:`.runbook`, the body's Markdown structure :mod:`.markdown`, the
defaults of a page without front matter :mod:`.plain_pages` and the chunking
:mod:`.chunking`; the names importers use are re-exported here.

Validation of what is given is strict on purpose. A typo in front matter (an unknown key,
a failure class that does not exist, a regex that does not compile or that matches
everything) would silently degrade retrieval; failing loudly at load time, with the file
and the field named, is cheaper than debugging a bad suggestion later.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ingest.linear_regex import LinearPattern, UnsupportedPattern
from ingest.linear_regex import compile as linear
from rca.corpus.chunking import Chunk, chunk_runbook
from rca.corpus.markdown import remediation_of
from rca.corpus.plain_pages import TITLE_MAX, first_heading, read_text, slugify
from rca.corpus.runbook import FAILURE_CLASSES, REQUIRED_SECTIONS, Runbook, RunbookError
from rca.corpus.step_metadata import (
    StepMetadataError,
    metadata_line_count,
    split_metadata,
    strip_metadata,
)
from rca.corpus.yaml_text import YAMLError, load_yaml
from rca.retrieval.signal_needs import need_words, needs_met

__all__ = [
    "FAILURE_CLASSES",
    "REQUIRED_SECTIONS",
    "Chunk",
    "Runbook",
    "RunbookError",
    "bundled_runbook_dir",
    "chunk_runbook",
    "corpus_version",
    "first_heading",
    "is_folder_readme",
    "load_directory",
    "match_signals",
    "parse_runbook",
    "read_text",
    "remediation_steps",
    "slugify",
    "without_signals",
]

_FRONT_MATTER_KEYS = frozenset(
    {"slug", "title", "failure_class", "frameworks", "signals", "tags", "sources"}
)
_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_NAME_RE = re.compile(r"^[^\s,][^\n,]{0,59}$")  # one short line, no list separators
#: Texts that no specific signal should match; a signal matching one of them is a catch-all.
_CATCH_ALL_PROBES: tuple[str, ...] = (
    "",
    "x",
    "Error: ",
    "RuntimeError: ",
    "Exception: an unknown error occurred",
    "ValueError: invalid value",
)


# --------------------------------------------------------------------------- parsing


def _split_front_matter(text: str, source: str) -> tuple[str | None, str]:
    """(front matter or None when the file has none, body). Front matter is optional: a
    plain Markdown page is a runbook too; one that opens with ``---`` must close it."""
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    raise RunbookError(source, "front matter", "no closing '---' line")


def _require_str(meta: dict[str, Any], key: str, source: str) -> str:
    if key not in meta or meta[key] is None:
        raise RunbookError(source, key, "missing")
    value = meta[key]
    if not isinstance(value, str) or not value.strip():
        raise RunbookError(source, key, f"must be a non-empty string, got {value!r}")
    return value.strip()


def _str_tuple(meta: dict[str, Any], key: str, source: str, *, required: bool) -> tuple[str, ...]:
    value = meta.get(key)
    if value is None:
        if required:
            raise RunbookError(source, key, "missing")
        return ()
    if not isinstance(value, list):
        raise RunbookError(source, key, f"must be a list, got {type(value).__name__}")
    items: list[str] = []
    for position, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise RunbookError(
                source, key, f"item {position} must be a non-empty string, got {item!r}"
            )
        items.append(item.strip())
    if required and not items:
        raise RunbookError(source, key, "must not be empty")
    return tuple(items)


def _names(meta: dict[str, Any], key: str, source: str) -> tuple[str, ...]:
    """Frameworks and tags are lowercase names used as filters; normalise and de-duplicate."""
    names: list[str] = []
    for item in _str_tuple(meta, key, source, required=False):
        name = item.lower()
        if not _NAME_RE.match(name):
            raise RunbookError(source, key, f"invalid name {item!r}")
        if name not in names:
            names.append(name)
    return tuple(names)


def _signal_items(meta: dict[str, Any], source: str) -> list[tuple[str, tuple[str, ...]]]:
    """(regex, needs) of each signal: a regex string, or ``{regex, needs}`` whose ``needs``
    are names the incident must show for it to count (:mod:`rca.retrieval.signal_needs`)."""
    value = meta.get("signals")
    if value is None:
        return []
    if not isinstance(value, list):
        raise RunbookError(source, "signals", f"must be a list, got {type(value).__name__}")
    items: list[tuple[str, tuple[str, ...]]] = []
    for position, item in enumerate(value):
        if isinstance(item, dict):
            unknown = sorted(str(key) for key in item if key not in ("regex", "needs"))
            if unknown or not isinstance(item.get("regex"), str):
                raise RunbookError(
                    source, "signals", f"item {position} must be a regex or {{regex, needs}}"
                )
            try:
                needs = _str_tuple(item, "needs", source, required=True)
            except RunbookError as exc:
                problem = f"item {position}: needs {exc.problem}"
                raise RunbookError(source, "signals", problem) from exc
            for name in needs:
                if not need_words(name):
                    raise RunbookError(source, "signals", f"need {name!r} names no word")
            item, names = item["regex"], needs
        else:
            names = ()
        if not isinstance(item, str) or not item.strip():
            raise RunbookError(
                source, "signals", f"item {position} must be a non-empty string, got {item!r}"
            )
        items.append((item.strip(), names))
    return items


def _signals(
    meta: dict[str, Any], source: str
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    items = _signal_items(meta, source)
    signals = tuple(regex for regex, _names in items)
    for pattern in signals:
        # Signals run over attacker-written incident text, so they must be RE2 (linear
        # time): a pattern with lookaround or backreferences is refused here, at load.
        try:
            compiled = linear(pattern, ignore_case=True)
        except UnsupportedPattern as exc:
            raise RunbookError(source, "signals", f"invalid regex {pattern!r}: {exc}") from exc
        for probe in _CATCH_ALL_PROBES:
            if compiled.search(probe):
                raise RunbookError(
                    source, "signals", f"regex {pattern!r} is a catch-all (matches {probe!r})"
                )
    needs = tuple(names for _regex, names in items)
    return signals, needs if any(needs) else ()


def _check_body(body: str, source: str) -> None:
    """Sections are optional (a team's page has its own); what is there must be well formed:
    ``Applies:`` lines only under numbered Remediation steps, each one valid."""
    if not body.strip():
        raise RunbookError(source, "body", "empty")
    steps = remediation_of(body)
    for number, step in enumerate(steps, start=1):
        try:
            split_metadata(step)
        except StepMetadataError as exc:
            raise RunbookError(source, f"Remediation step {number}", str(exc)) from exc
    if metadata_line_count(body) != sum(metadata_line_count(step) for step in steps):
        raise RunbookError(
            source, "body", "an 'Applies:' line must be indented under a numbered Remediation step"
        )


def _title(meta: dict[str, Any], body: str, source: str, slug: str) -> str:
    if meta.get("title") is not None:
        title = _require_str(meta, "title", source)
        if len(title) > TITLE_MAX:
            raise RunbookError(source, "title", f"longer than {TITLE_MAX} characters")
        return title
    heading = first_heading(body)
    if heading:
        return heading
    stem = Path(source).name.rsplit(".", 1)[0] if source else ""
    return " ".join(stem.replace("_", " ").replace("-", " ").split())[:TITLE_MAX] or slug


def _slug(meta: dict[str, Any], source: str, fallback: str) -> str:
    if meta.get("slug") is None:
        stem = Path(source).name.rsplit(".", 1)[0] if source else ""
        return slugify(stem or fallback)
    slug = _require_str(meta, "slug", source)
    if not _SLUG_RE.match(slug) or len(slug) > 120:
        raise RunbookError(source, "slug", f"{slug!r} must be lowercase words joined by '-'")
    if source:
        stem = Path(source).name.removesuffix(".md")
        if stem != slug:
            raise RunbookError(source, "slug", f"{slug!r} does not match the file name {stem!r}")
    return slug


def _failure_class(meta: dict[str, Any], source: str) -> str:
    if meta.get("failure_class") is None:
        return ""
    failure_class = _require_str(meta, "failure_class", source)
    if failure_class not in FAILURE_CLASSES:
        raise RunbookError(source, "failure_class", f"unknown failure class {failure_class!r}")
    return failure_class


@functools.lru_cache(maxsize=1024)
def parse_runbook(text: str, source: str = "") -> Runbook:
    """Parse and validate one runbook file's text.

    Every front matter field is optional, and so is the front matter itself: the slug
    defaults to the file name (slugified), the title to the first heading (else the file
    name), the failure class to none. A field that is given must be valid; ``source`` is
    the file path (used in error messages), and a given slug must equal the file name
    without ``.md`` so that links and citations never drift from files.

    Cached by (text, source): the result is immutable and depends on nothing else, and
    parsing is ~5 ms a file (the YAML front matter, the signals' catch-all probes), so
    every re-read of an unchanged corpus (`runbooks load`, ``rca eval``, the tests' many
    loads of the bundled runbooks) only reads the files. A failure is not cached.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    raw_meta, body = _split_front_matter(text, source)
    meta: Any = {}
    if raw_meta is not None:
        try:
            meta = load_yaml(raw_meta)
        except YAMLError as exc:
            raise RunbookError(source, "front matter", f"invalid YAML: {exc}") from exc
        meta = {} if meta is None else meta
        if not isinstance(meta, dict):
            raise RunbookError(source, "front matter", "must be a YAML mapping")
    unknown = sorted(str(key) for key in meta if key not in _FRONT_MATTER_KEYS)
    if unknown:
        raise RunbookError(source, unknown[0], "unknown front matter key")
    _check_body(body, source)
    heading = first_heading(body)
    signals, signal_needs = _signals(meta, source)
    slug = _slug(meta, source, str(meta.get("title") or heading or text[:80]))
    return Runbook(
        slug=slug,
        title=_title(meta, body, source, slug),
        failure_class=_failure_class(meta, source),
        frameworks=_names(meta, "frameworks", source),
        signals=signals,
        tags=_names(meta, "tags", source),
        sources=_str_tuple(meta, "sources", source, required=False),
        body=body.strip("\n") + "\n",
        checksum=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        signal_needs=signal_needs,
    )


def without_signals(runbooks: Iterable[Runbook]) -> list[Runbook]:
    """The same runbooks with no ``signals``: what retrieval does on a plain Markdown corpus
    (``rca eval --ignore-signals`` measures it without a second copy of the files)."""
    return [dataclasses.replace(rb, signals=(), signal_needs=()) for rb in runbooks]


def load_directory(path: str | Path) -> list[Runbook]:
    """Load every ``*.md`` runbook of a directory but its README, sorted by slug; duplicate
    slugs are errors."""
    directory = Path(path)
    if not directory.is_dir():
        raise RunbookError(str(directory), "directory", "not a directory")
    runbooks: dict[str, Runbook] = {}
    for file in sorted(directory.glob("*.md")):
        if is_folder_readme(file):
            continue
        runbook = parse_runbook(read_text(file), source=str(file))
        if runbook.slug in runbooks:
            raise RunbookError(str(file), "slug", f"duplicate slug {runbook.slug!r}")
        runbooks[runbook.slug] = runbook
    return [runbooks[slug] for slug in sorted(runbooks)]


def is_folder_readme(path: Path) -> bool:
    """``README.md`` describes the folder it sits in (the GitHub convention), so a corpus
    folder can say how it was written without the note becoming a runbook."""
    return path.name.lower() in ("readme.md", "readme.markdown")


def corpus_version(runbooks: Iterable[Runbook]) -> str:
    """A sha256 over slugs and checksums: changes when any runbook is added, removed or edited.

    Order-independent, so callers need not sort first.
    """
    digest = hashlib.sha256()
    for slug, checksum in sorted((rb.slug, rb.checksum) for rb in runbooks):
        digest.update(slug.encode("utf-8"))
        digest.update(b"\0")
        digest.update(checksum.encode("ascii"))
        digest.update(b"\n")
    return digest.hexdigest()


def bundled_runbook_dir() -> Path:
    """The runbooks shipped with the package (``rca/runbooks``)."""
    return Path(__file__).resolve().parents[1] / "runbooks"


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> LinearPattern:
    # The corpus has more signals than linear()'s own cache holds; keep them all.
    return linear(pattern, ignore_case=True)


def match_signals(
    runbook: Runbook, text: str, terms: frozenset[str] | None = None
) -> tuple[str, ...]:
    """The runbook's signal regexes that match ``text`` (usually ``"error_type: message"``).

    Case-insensitive ``search``, as documented for the ``signals`` front matter field.
    With ``terms`` (:func:`rca.retrieval.signal_needs.incident_terms`), a signal with
    ``needs`` matches only when the terms name one of them, as retrieval counts it;
    without, every regex is tried on ``text`` alone.
    """
    needs = runbook.signal_needs or tuple(() for _ in runbook.signals)
    return tuple(
        p
        for p, names in zip(runbook.signals, needs, strict=True)
        if _compiled(p).search(text)
        and (terms is None or needs_met(tuple(w for w in map(need_words, names) if w), terms))
    )


def remediation_steps(rb: Runbook) -> list[str]:
    """The numbered steps of the ``## Remediation`` section, in order, without their numbers
    and without their ``Applies:`` metadata (:mod:`.step_metadata`)."""
    return [strip_metadata(step) for step in remediation_of(rb.body)]
