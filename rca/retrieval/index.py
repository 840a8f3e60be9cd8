"""The in-memory side of a runbook corpus: BM25 over chunks, runbook metadata, signal regexes.

A worker builds one :class:`CorpusIndex` from the database and keeps it until the stored
corpus version changes. ``rca eval --corpus DIR`` builds a scratch one straight from files
(with embeddings held here too), so evaluating other runbooks never touches the stored ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear
from rca.corpus import files
from rca.retrieval.agreement import (
    class_names,
    exception_class,
    runbook_frameworks,
    type_rarity,
)
from rca.retrieval.bm25 import BM25Index
from rca.retrieval.quoted import QuotedPhrases, QuotedRuns, quoted_phrases, symptom_quotes
from rca.retrieval.signal_needs import Needs, needs_met, signal_entry
from rca.retrieval.tokens import tokenize
from rca.retrieval.vectors import ChunkVectors, vectors_for

__all__ = ["CorpusIndex", "current_index", "index_from_runbooks"]

_REGEX_SYNTAX = linear(r"\\[a-zA-Z]|[\\^$.*+?()\[\]{}|]")


def _signal_words(pattern: str) -> str:
    """The literal words of a signal regex (``'Gradient overflow\\.\\s+Skipping'`` ->
    ``'Gradient overflow Skipping'``): the most specific vocabulary a runbook has."""
    return _REGEX_SYNTAX.sub(" ", pattern)


@dataclass
class CorpusIndex:
    """Runbooks (by position) and their chunks, with a BM25 index over the chunks.

    Each runbook also gets one extra BM25 document made of its title, tags and the words
    of its signal regexes — its "field" of most specific terms — so a query that names an
    error exactly finds the runbook even when no body chunk repeats those words. A runbook
    without signal regexes (plain Markdown) has its quoted error lines matched instead, and
    the quotes of its symptom sections join its field (:mod:`rca.retrieval.quoted`).
    """

    version: str
    slugs: list[str]
    titles: list[str]
    classes: list[str]
    runbook_ids: list[int | None]
    patterns: list[list[LinearPattern]]
    chunk_ids: list[int | None]
    chunk_runbook: np.ndarray  # runbook position of each chunk
    chunk_sections: list[str]
    chunk_texts: list[str]
    field_texts: list[str]  # per runbook: title, tags, signal words
    #: per runbook: its front-matter ``frameworks`` as declared (empty for plain Markdown)
    declared_frameworks: list[list[str]] = field(default_factory=list)
    #: per runbook, per pattern: the names the incident must show for it to count
    #: (:mod:`rca.retrieval.signal_needs`); empty (the default) when none has needs
    pattern_needs: list[list[Needs]] = field(default_factory=list)
    embeddings: np.ndarray | None = None  # chunk x dim, unit rows (scratch corpora only)
    stored_vectors: ChunkVectors | None = None  # the stored corpus' vectors, held here
    bm25: BM25Index = field(init=False)
    doc_runbook: np.ndarray = field(init=False)  # runbook position of each BM25 document
    doc_is_chunk: np.ndarray = field(init=False)
    quoted: QuotedPhrases = field(init=False)
    quoted_runs: QuotedRuns = field(init=False)
    quoted_only: np.ndarray = field(init=False)
    #: per runbook: its frameworks (:func:`rca.retrieval.agreement.runbook_frameworks`)
    frameworks: list[frozenset[str]] = field(init=False)

    def __post_init__(self) -> None:
        symptoms = self._symptom_quotes()
        for position, quotes in enumerate(symptoms):
            if quotes:  # a page without signal regexes: its quoted error lines are its field
                self.field_texts[position] = " ".join([self.field_texts[position], *quotes])
        docs = [tokenize(text) for text in self.chunk_texts]
        owners = list(self.chunk_runbook)
        for position in range(len(self.slugs)):
            docs.append(tokenize(self.field_texts[position]))
            owners.append(position)
        self.bm25 = BM25Index(docs)
        self.doc_runbook = np.array(owners, dtype=np.int64)
        self.doc_is_chunk = np.arange(len(docs)) < len(self.chunk_texts)
        self.position_of = {slug: i for i, slug in enumerate(self.slugs)}
        self.chunk_position = {cid: i for i, cid in enumerate(self.chunk_ids) if cid is not None}
        self.runbook_position = {
            rid: i for i, rid in enumerate(self.runbook_ids) if rid is not None
        }
        # Each distinct regex is searched once per query, however many runbooks share it:
        # runbooks derived from a template repeat theirs, and at 25k runbooks x ~7 regexes
        # one search each cost ~130 ms a query (0.7 us a search), the whole latency budget.
        distinct: dict[tuple[str, Needs], int] = {}
        self._distinct_patterns: list[LinearPattern] = []
        self._distinct_needs: list[Needs] = []
        owners, refs = [], []
        needs_of = self.pattern_needs or [[] for _ in self.patterns]
        for position, patterns in enumerate(self.patterns):
            needs = needs_of[position] or [() for _ in patterns]
            for pattern, need in zip(patterns, needs, strict=True):
                key = (pattern.pattern, need)
                if key not in distinct:
                    distinct[key] = len(self._distinct_patterns)
                    self._distinct_patterns.append(pattern)
                    self._distinct_needs.append(need)
                owners.append(position)
                refs.append(distinct[key])
        self._pattern_owner = np.array(owners, dtype=np.int64)
        self._pattern_ref = np.array(refs, dtype=np.int64)
        texts: list[list[str]] = [[] for _ in self.slugs]
        for position, text in zip(self.chunk_runbook.tolist(), self.chunk_texts, strict=True):
            if not self.patterns[position]:
                texts[position].append(text)
        self.quoted = QuotedPhrases([quoted_phrases("\n".join(own)) for own in texts])
        self.quoted_runs = QuotedRuns(symptoms)
        #: per runbook: 1.0 when it has no signal regexes, so a matched signal is a quote
        self.quoted_only = np.array([not own for own in self.patterns], dtype=np.float64)
        self._agreement_evidence()

    def _symptom_quotes(self) -> list[list[str]]:
        """Per runbook without signal regexes: the quotes of its symptom sections
        (:func:`rca.retrieval.quoted.symptom_quotes`); none for the others."""
        quotes: list[list[str]] = [[] for _ in self.slugs]
        owners = self.chunk_runbook.tolist()
        for position, section, text in zip(
            owners, self.chunk_sections, self.chunk_texts, strict=True
        ):
            if not self.patterns[position]:
                body = text.split("\n", 1)[1] if "\n" in text else ""  # after the title line
                quotes[position].extend(symptom_quotes(section, body))
        return quotes

    def _agreement_evidence(self) -> None:
        """Each runbook's frameworks, and which runbooks quote each class name
        (:mod:`rca.retrieval.agreement`), from its title and chunks."""
        own: list[list[str]] = [[title] for title in self.titles]
        for position, text in zip(self.chunk_runbook.tolist(), self.chunk_texts, strict=True):
            own[position].append(text)
        declared = self.declared_frameworks or [[] for _ in self.slugs]
        quoting: dict[str, list[int]] = {}
        self.frameworks = []
        for position, texts in enumerate(own):
            text = "\n".join(texts)
            self.frameworks.append(runbook_frameworks(declared[position], text))
            for name in class_names(text):
                quoting.setdefault(name, []).append(position)
        self._quoting = {name: np.array(ids, dtype=np.int64) for name, ids in quoting.items()}
        self._framework_masks = {
            name: np.array([name in own for own in self.frameworks], dtype=bool)
            for name in set().union(*self.frameworks)
        }

    def framework_matches(self, frameworks: Iterable[str]) -> np.ndarray:
        """Per runbook: 1.0 when it shares one of ``frameworks``, else 0.0 (one mask per
        framework, built once: no walk over the runbooks per query)."""
        result = np.zeros(len(self.slugs), dtype=bool)
        for name in frameworks:
            mask = self._framework_masks.get(name)
            if mask is not None:
                result |= mask
        return result.astype(np.float64)

    def __len__(self) -> int:
        return len(self.slugs)

    def signal_matches(
        self, text: str, terms: frozenset[str] | Callable[[], frozenset[str]] = frozenset()
    ) -> np.ndarray:
        """How many of each runbook's signal regexes match ``text`` (for a runbook without
        regexes: how many of its quoted error lines ``text`` contains, plus one when a run of
        a symptom quote's tokens occurs in it). A regex with
        ``needs`` counts only when the incident's ``terms``
        (:func:`rca.retrieval.signal_needs.incident_terms`; a callable is called only
        when such a regex matched) name one of them."""
        found = [p.search(text) is not None for p in self._distinct_patterns]
        gated = [i for i, hit in enumerate(found) if hit and self._distinct_needs[i]]
        if gated:
            known = terms() if callable(terms) else terms
            for i in gated:
                found[i] = needs_met(self._distinct_needs[i], known)
        hits = np.array(found, dtype=np.float64)
        regexes: np.ndarray = np.bincount(
            self._pattern_owner, weights=hits[self._pattern_ref], minlength=len(self.slugs)
        ).astype(np.float64)
        regexes += self.quoted.matches(text)
        regexes += self.quoted_runs.matches(text)
        return regexes

    def exception_matches(self, class_name: str) -> np.ndarray:
        """Per runbook: the rarity of ``class_name`` among the runbooks that quote it
        (:func:`rca.retrieval.agreement.type_rarity`), 0 for the others."""
        result = np.zeros(len(self.slugs), dtype=np.float64)
        quoting = self._quoting.get(class_name) if class_name else None
        if quoting is not None:
            result[quoting] = type_rarity(int(quoting.size), len(self.slugs))
        return result

    def agreement(
        self, frameworks: Iterable[str], error_type_short: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """(framework agreement, exception-class rarity) of every runbook with an incident
        showing ``frameworks`` and ``error_type_short``: the two values fusion weighs as
        ``framework`` and ``exception_type`` (:mod:`rca.retrieval.agreement`)."""
        framework = self.framework_matches(frameworks)
        return framework, self.exception_matches(exception_class(error_type_short))

    def held_vectors(self) -> ChunkVectors:
        """The chunks' stored vectors (:mod:`rca.retrieval.vectors`): loaded with a stored
        corpus' index; another one (built by hand) reads its candidates as they come."""
        if self.stored_vectors is None:
            self.stored_vectors = vectors_for(self.chunk_ids, self.chunk_position, load=False)
        return self.stored_vectors

    def bm25_scores(
        self, tokens: Sequence[str] | Mapping[str, float]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(per-runbook BM25 = its best document, per-chunk BM25); ``tokens`` may be a
        weighted query (token -> weight)."""
        scores = self.bm25.scores(tokens)
        per_runbook = np.zeros(len(self.slugs), dtype=np.float64)
        np.maximum.at(per_runbook, self.doc_runbook, scores)
        return per_runbook, scores[self.doc_is_chunk]


def _build(
    rows: Sequence[Mapping[str, Any]], chunks: Sequence[Mapping[str, Any]], version: str
) -> CorpusIndex:
    position = {row["slug"]: i for i, row in enumerate(rows)}
    entries = [[signal_entry(entry) for entry in row["signals"]] for row in rows]
    fields = [
        " ".join([row["title"], *row["tags"], *(_signal_words(p) for p, _needs in own)])
        for row, own in zip(rows, entries, strict=True)
    ]
    return CorpusIndex(
        version=version,
        slugs=[row["slug"] for row in rows],
        titles=[row["title"] for row in rows],
        classes=[row["failure_class"] for row in rows],
        runbook_ids=[row.get("id") for row in rows],
        patterns=[[linear(p, ignore_case=True) for p, _needs in own] for own in entries],
        pattern_needs=[[needs for _p, needs in own] for own in entries],
        chunk_ids=[c.get("id") for c in chunks],
        chunk_runbook=np.array([position[c["slug"]] for c in chunks], dtype=np.int64),
        chunk_sections=[c["section"] for c in chunks],
        chunk_texts=[c["text"] for c in chunks],
        field_texts=fields,
        declared_frameworks=[list(row.get("frameworks") or []) for row in rows],
    )


def index_from_runbooks(runbooks: list[files.Runbook], *, embed: bool = True) -> CorpusIndex:
    """A scratch index straight from parsed runbooks (``rca eval --corpus``); embeds the
    chunks in this process when ``embed`` (CLI and tests only): vectors shipped or cached
    for the same model and text are read back, the rest run the model (and are cached)."""
    rows = [
        {
            "slug": rb.slug,
            "title": rb.title,
            "failure_class": rb.failure_class,
            "tags": list(rb.tags),
            "signals": rb.signal_entries(),
            "frameworks": list(rb.frameworks),
        }
        for rb in runbooks
    ]
    chunks = [
        {"slug": c.runbook_slug, "section": c.section, "text": c.text}
        for rb in runbooks
        for c in files.chunk_runbook(rb)
    ]
    index = _build(rows, chunks, files.corpus_version(runbooks))
    if embed and chunks:
        from rca.corpus.embeddings import cached_vectors, chunk_cache

        vectors, _known = cached_vectors(index.chunk_texts, chunk_cache())
        index.embeddings = np.array(vectors, dtype=np.float32)
    return index


def _index_from_db(version: str) -> CorpusIndex:
    from django.db.models import F

    from rca.models import Runbook, RunbookChunk

    rows = list(
        Runbook.objects.order_by("slug").values(
            "id", "slug", "title", "failure_class", "tags", "signals", "frameworks"
        )
    )
    chunks = list(
        RunbookChunk.objects.order_by("runbook__slug", "ordinal").values(
            "id", "section", "text", slug=F("runbook__slug")
        )
    )
    index = _build(rows, chunks, version)
    index.stored_vectors = vectors_for(index.chunk_ids, index.chunk_position, load=True)
    return index


_lock = threading.Lock()
_current: CorpusIndex | None = None


def current_index() -> CorpusIndex:
    """The stored corpus' index, rebuilt when ``CorpusState.version`` changed (one query)."""
    global _current
    from rca.corpus.store import current_version

    version = current_version()
    index = _current
    if index is not None and index.version == version:
        return index
    with _lock:
        if _current is None or _current.version != version:
            _current = _index_from_db(version)
        return _current
