"""The bundled runbook corpus: parsing, validation, versioning and chunking.

Runbooks are Markdown files with YAML front matter (see ``rca/runbooks``). Everything here is
pure (no Django, no database, no models) so that the web process, the Celery workers and the
tests can all load the corpus cheaply and agree on its version: the worker rebuilds its
in-memory BM25 index and re-embeds chunks only when :func:`corpus_version` changes.

Validation is strict on purpose. A typo in front matter (an unknown key, a failure class
that does not exist, a regex that does not compile or that matches everything) would
silently degrade retrieval; failing loudly at load time, with the file and the field named,
is cheaper than debugging a bad suggestion later.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ingest.linear_regex import LinearPattern, UnsupportedPattern
from ingest.linear_regex import compile as linear

__all__ = [
    "FAILURE_CLASSES",
    "REQUIRED_SECTIONS",
    "Chunk",
    "Runbook",
    "RunbookError",
    "bundled_runbook_dir",
    "chunk_runbook",
    "corpus_version",
    "load_directory",
    "match_signals",
    "parse_runbook",
    "remediation_steps",
]

#: Root-cause ids of the failure taxonomy (shared/eval/README.md) plus ``serving`` for
#: inference-serving failures (probes, pools, queues, caches, retrieval) outside it.
FAILURE_CLASSES: frozenset[str] = frozenset(
    {
        "cuda_oom",
        "host_oom",
        "matmul_shape_mismatch",
        "conv_channel_mismatch",
        "checkpoint_shape_mismatch",
        "checkpoint_missing_keys",
        "device_mismatch",
        "dtype_mismatch",
        "nan_loss",
        "seq_too_long",
        "embedding_index_out_of_range",
        "cuda_arch_or_driver",
        "nccl_distributed",
        "dataloader_worker",
        "inplace_autograd",
        "backward_twice",
        "model_file_not_found",
        "tf_input_shape",
        "onnx_export_or_runtime",
        "kv_cache_capacity",
        "quantization_error",
        "grpc_or_timeout",
        "version_incompatibility",
        "mixed_precision_overflow",
        "serving",
    }
)

#: Sections every runbook must have; the offline provider and the prompt rely on them.
REQUIRED_SECTIONS: tuple[str, ...] = ("Symptoms", "Diagnosis", "Remediation", "Verify")

_FRONT_MATTER_KEYS = frozenset({"slug", "title", "failure_class", "frameworks", "signals", "tags"})
_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_NAME_RE = re.compile(r"^[^\s,][^\n,]{0,59}$")  # one short line, no list separators
_SECTION_RE = re.compile(r"^##[ \t]+(?P<name>\S.*?)[ \t]*#*[ \t]*$")
_NUMBERED_ITEM_RE = re.compile(r"^\d{1,3}[.)][ \t]+\S")
_NUMBERED_PREFIX_RE = re.compile(r"^\d{1,3}[.)][ \t]+")
_BULLET_ITEM_RE = re.compile(r"^[-*+][ \t]+\S")
_FENCE_RE = re.compile(r"^[ \t]*(```|~~~)")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])[ \t]+(?=[A-Z`*(\"'])")
#: Texts that no specific signal should match; a signal matching one of them is a catch-all.
_CATCH_ALL_PROBES: tuple[str, ...] = (
    "",
    "x",
    "Error: ",
    "RuntimeError: ",
    "Exception: an unknown error occurred",
    "ValueError: invalid value",
)


class RunbookError(ValueError):
    """A runbook file is malformed; the message names the file and the offending field."""

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source = source or "<string>"
        self.field = field
        self.problem = problem
        super().__init__(f"{self.source}: field '{field}': {problem}")


@dataclass(frozen=True)
class Runbook:
    """One parsed runbook. ``body`` is the Markdown after the front matter.

    ``checksum`` is the sha256 of the whole file (newlines normalised), so any edit to the
    front matter or the body changes the corpus version.
    """

    slug: str
    title: str
    failure_class: str
    frameworks: tuple[str, ...]
    signals: tuple[str, ...]
    tags: tuple[str, ...]
    body: str
    checksum: str


@dataclass(frozen=True)
class Chunk:
    """A retrievable piece of a runbook.

    ``ordinal`` is the 0-based position of the chunk within its runbook, so
    ``(runbook_slug, ordinal)`` identifies a chunk. ``text`` starts with
    ``"{title} — {section}\\n"`` so that BM25 and embeddings see the context of every piece.
    """

    runbook_slug: str
    title: str
    section: str
    ordinal: int
    text: str


# --------------------------------------------------------------------------- parsing


def _split_front_matter(text: str, source: str) -> tuple[str, str]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise RunbookError(source, "front matter", "file must start with a '---' line")
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


def _signals(meta: dict[str, Any], source: str) -> tuple[str, ...]:
    signals = _str_tuple(meta, "signals", source, required=True)
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
    return signals


def _section_names(body: str) -> list[str]:
    names: list[str] = []
    in_fence = False
    for line in body.split("\n"):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else _SECTION_RE.match(line)
        if match:
            names.append(match.group("name"))
    return names


def _check_body(body: str, source: str) -> None:
    if not body.strip():
        raise RunbookError(source, "body", "empty")
    present = {name.lower() for name in _section_names(body)}
    for section in REQUIRED_SECTIONS:
        if section.lower() not in present:
            raise RunbookError(source, "body", f"missing '## {section}' section")
    if not _steps_of(body):
        raise RunbookError(source, "body", "'## Remediation' has no numbered step")


def parse_runbook(text: str, source: str = "") -> Runbook:
    """Parse and validate one runbook file's text.

    ``source`` is the file path (used in error messages); when given, the slug must equal
    the file name without ``.md`` so that links and citations never drift from files.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    raw_meta, body = _split_front_matter(text, source)
    try:
        meta = yaml.safe_load(raw_meta)
    except yaml.YAMLError as exc:
        raise RunbookError(source, "front matter", f"invalid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise RunbookError(source, "front matter", "must be a YAML mapping")
    unknown = sorted(str(key) for key in meta if key not in _FRONT_MATTER_KEYS)
    if unknown:
        raise RunbookError(source, unknown[0], "unknown front matter key")

    slug = _require_str(meta, "slug", source)
    if not _SLUG_RE.match(slug):
        raise RunbookError(source, "slug", f"{slug!r} must be lowercase words joined by '-'")
    if source:
        stem = Path(source).name.removesuffix(".md")
        if stem != slug:
            raise RunbookError(source, "slug", f"{slug!r} does not match the file name {stem!r}")
    title = _require_str(meta, "title", source)
    failure_class = _require_str(meta, "failure_class", source)
    if failure_class not in FAILURE_CLASSES:
        raise RunbookError(source, "failure_class", f"unknown failure class {failure_class!r}")
    _check_body(body, source)
    return Runbook(
        slug=slug,
        title=title,
        failure_class=failure_class,
        frameworks=_names(meta, "frameworks", source),
        signals=_signals(meta, source),
        tags=_names(meta, "tags", source),
        body=body.strip("\n") + "\n",
        checksum=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


def load_directory(path: str | Path) -> list[Runbook]:
    """Load every ``*.md`` runbook of a directory, sorted by slug; duplicate slugs are errors."""
    directory = Path(path)
    if not directory.is_dir():
        raise RunbookError(str(directory), "directory", "not a directory")
    runbooks: dict[str, Runbook] = {}
    for file in sorted(directory.glob("*.md")):
        runbook = parse_runbook(file.read_text(encoding="utf-8"), source=str(file))
        if runbook.slug in runbooks:
            raise RunbookError(str(file), "slug", f"duplicate slug {runbook.slug!r}")
        runbooks[runbook.slug] = runbook
    return [runbooks[slug] for slug in sorted(runbooks)]


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


def match_signals(runbook: Runbook, text: str) -> tuple[str, ...]:
    """The runbook's signal regexes that match ``text`` (usually ``"error_type: message"``).

    Case-insensitive ``search``, as documented for the ``signals`` front matter field.
    """
    return tuple(p for p in runbook.signals if _compiled(p).search(text))


# --------------------------------------------------------------------------- chunking


@dataclass(frozen=True)
class _Block:
    """A unit that chunking never splits across chunks unless it alone is too long."""

    text: str
    gap_before: bool  # a blank line separated it from the previous block
    atomic: bool  # a numbered step: never split, even when over budget


def _sections(body: str) -> list[tuple[str, str]]:
    """Split a body into ``(section name, section text)``; the H1 title line is dropped."""
    sections: list[tuple[str, list[str]]] = [("Overview", [])]
    in_fence = False
    for line in body.split("\n"):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _SECTION_RE.match(line)
        if match:
            sections.append((match.group("name"), []))
        elif (
            not in_fence
            and line.startswith("# ")
            and len(sections) == 1
            and not any(seen.strip() for seen in sections[0][1])
        ):
            continue  # the H1 title; the chunk prefix already carries the title
        else:
            sections[-1][1].append(line)
    return [(name, "\n".join(lines).strip("\n")) for name, lines in sections]


def _blocks(section_text: str) -> list[_Block]:
    """Split a section into paragraphs and list items, keeping each item's continuation
    lines, nested content and fenced code with it."""
    blocks: list[_Block] = []
    current: list[str] = []
    current_atomic = False
    current_gap = False
    in_fence = False
    blank_seen = False

    def flush() -> None:
        nonlocal current
        text = "\n".join(current).strip("\n")
        if text.strip():
            blocks.append(_Block(text, current_gap, current_atomic))
        current = []

    for line in section_text.split("\n"):
        if in_fence:
            current.append(line)
            if _FENCE_RE.match(line):
                in_fence = False
            continue
        if not line.strip():
            blank_seen = True
            if current:
                current.append(line)
            continue
        numbered = bool(_NUMBERED_ITEM_RE.match(line))
        bullet = bool(_BULLET_ITEM_RE.match(line))
        indented = line[:1] in (" ", "\t")
        # Unindented text right below a line continues it (Markdown "lazy" continuation);
        # after a blank line only indented text continues a list item.
        starts_new = (
            numbered
            or bullet
            or line.startswith("#")
            or not current
            or (blank_seen and not indented)
        )
        if starts_new:
            flush()
            current_gap = blank_seen and bool(blocks)
            current_atomic = numbered
        current.append(line)
        blank_seen = False
        if _FENCE_RE.match(line):
            in_fence = True
    flush()
    return blocks


def _split_oversized(text: str, budget: int) -> list[str]:
    """Split a too-long paragraph or bullet at sentence boundaries, then at whitespace."""
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END_RE.split(text):
        while len(sentence) > budget:
            cut = sentence.rfind(" ", 0, budget)
            cut = cut if cut > 0 else budget
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:cut].rstrip())
            sentence = sentence[cut:].lstrip()
        candidate = f"{current} {sentence}" if current else sentence
        if len(candidate) <= budget:
            current = candidate
        else:
            pieces.append(current)
            current = sentence
    if current:
        pieces.append(current)
    return [piece for piece in pieces if piece.strip()]


def chunk_runbook(rb: Runbook, max_chars: int = 1200) -> list[Chunk]:
    """Cut a runbook into heading-aware chunks of at most ``max_chars`` characters.

    Each ``##`` section is chunked on its own; long sections are split between paragraphs
    and list items, never inside a numbered step (a remediation step is one action with its
    reason: cutting it would retrieve an action without its why). A single step longer than
    the budget becomes its own oversized chunk; other oversized paragraphs are split at
    sentence boundaries.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    chunks: list[Chunk] = []
    for section, section_text in _sections(rb.body):
        if not section_text.strip():
            continue
        prefix = f"{rb.title} — {section}\n"
        budget = max(max_chars - len(prefix), 1)
        pieces: list[tuple[str, bool]] = []  # (text, gap_before)
        for block in _blocks(section_text):
            if len(block.text) > budget and not block.atomic:
                split = _split_oversized(block.text, budget)
                pieces.extend((piece, block.gap_before and i == 0) for i, piece in enumerate(split))
            else:
                pieces.append((block.text, block.gap_before))
        current = ""
        for text, gap in pieces:
            joined = f"{current}{chr(10) * (2 if gap else 1)}{text}" if current else text
            if current and len(joined) > budget:
                chunks.append(Chunk(rb.slug, rb.title, section, len(chunks), prefix + current))
                current = text
            else:
                current = joined
        if current:
            chunks.append(Chunk(rb.slug, rb.title, section, len(chunks), prefix + current))
    return chunks


def remediation_steps(rb: Runbook) -> list[str]:
    """The numbered steps of the ``## Remediation`` section, in order, without their numbers.

    Used by the offline provider, which composes its suggestion from the top runbook's
    first applicable step.
    """
    return _steps_of(rb.body)


def _steps_of(body: str) -> list[str]:
    for section, section_text in _sections(body):
        if section.lower() == "remediation":
            return [
                _NUMBERED_PREFIX_RE.sub("", block.text, count=1)
                for block in _blocks(section_text)
                if block.atomic
            ]
    return []
