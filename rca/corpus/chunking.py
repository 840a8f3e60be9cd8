"""Cutting a runbook into the heading-aware chunks that retrieval indexes and embeds."""

from __future__ import annotations

from dataclasses import dataclass

from rca.corpus.markdown import blocks, sections
from rca.corpus.runbook import Runbook
from rca.corpus.sentences import split_sentences
from rca.corpus.step_metadata import strip_metadata

__all__ = ["Chunk", "chunk_runbook"]


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


def _split_oversized(text: str, budget: int) -> list[str]:
    """Split a too-long paragraph or bullet at sentence boundaries, then at whitespace."""
    pieces: list[str] = []
    current = ""
    for sentence in split_sentences(text):
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
    sentence boundaries. Steps' ``Applies:`` lines are left out: they steer the offline
    provider's choice of step, not what retrieval matches.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    chunks: list[Chunk] = []
    for section, section_text in sections(strip_metadata(rb.body)):
        if not section_text.strip():
            continue
        prefix = f"{rb.title} — {section}\n"
        budget = max(max_chars - len(prefix), 1)
        pieces: list[tuple[str, bool]] = []  # (text, gap_before)
        for block in blocks(section_text):
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
