"""Quoted error lines: the signals of a runbook written without ``signals`` (pure).

A team's plain Markdown page has no front-matter regexes, but it usually quotes the error it
is about in backticks (```IndexError: index out of range in self```). Such a quote is what
a ``signals`` regex would have said, so for a runbook without ``signals`` retrieval treats
each quote of at least :data:`~rca.retrieval.weights.MIN_QUOTED_TOKENS` distinct tokens as
one: it matches an incident whose error text (type, message, chained exceptions) contains
every one of the quote's tokens (:func:`rca.retrieval.tokens.tokenize` on both sides, so
numbers, paths and placeholders like ``N`` drop out of both). Commands and code quoted in a
page's remediation rarely have all their words in an error message, so they seldom match.

Matching is an inverted index: each query token adds one to the phrases that hold it, and a
phrase matches when its count reaches its size — work in the postings of the query's tokens,
never a walk over every phrase.

A quote of a whole error line rarely appears whole in another occurrence of the error (the
module, argument or class it names differs). So the quotes of a page's symptoms (its opening
text, and a section whose heading says symptoms, errors or what you see: see
:func:`symptom_quotes`) also match by their runs: any ``MIN_QUOTED_TOKENS`` consecutive
tokens of such a quote, found in that order in the error text, count as a matched signal
(:class:`QuotedRuns`), the part of the line a ``signals`` author would have picked. Those
quotes also join the page's title field for BM25, as signal words do
(:class:`~rca.retrieval.index.CorpusIndex`). Measured in docs/MEASUREMENTS.md "Retrieval"
(2026-12-06, issue 15).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ingest.linear_regex import compile as linear
from rca.retrieval.tokens import tokenize
from rca.retrieval.weights import MIN_QUOTED_TOKENS

__all__ = ["QuotedPhrases", "QuotedRuns", "is_symptom_section", "quoted_phrases", "symptom_quotes"]

_CODE_SPAN = linear(r"`([^`\n]+)`")
#: Section names (:func:`rca.corpus.markdown.sections`; ``Overview`` is the text before the
#: first heading) under which a page describes what the failure looks like, not what to do.
_SYMPTOM_SECTION = linear(
    r"\b(?:overview|symptoms?|errors?|signs?|what you see|seen as)\b", ignore_case=True
)


def is_symptom_section(name: str) -> bool:
    """Whether a section of this name describes the failure (its quotes are error lines)."""
    return _SYMPTOM_SECTION.search(name) is not None


def symptom_quotes(section: str, text: str) -> list[str]:
    """The inline code spans of ``text`` when ``section`` describes the failure, else none."""
    if not is_symptom_section(section):
        return []
    return [match[1] for match in _CODE_SPAN.finditer(text)]


def quoted_phrases(text: str, min_tokens: int = MIN_QUOTED_TOKENS) -> list[frozenset[str]]:
    """Token sets of the inline code spans of ``text`` with at least ``min_tokens`` distinct
    tokens, each once."""
    found: list[frozenset[str]] = []
    for match in _CODE_SPAN.finditer(text):
        tokens = frozenset(tokenize(match[1]))
        if len(tokens) >= min_tokens and tokens not in found:
            found.append(tokens)
    return found


class QuotedPhrases:
    """The quoted phrases of some runbooks (by position), matched against error texts."""

    def __init__(self, phrases: Sequence[Sequence[frozenset[str]]]) -> None:
        self.size = len(phrases)
        owners: list[int] = []
        lengths: list[int] = []
        postings: dict[str, list[int]] = {}
        for position, own in enumerate(phrases):
            for phrase in own:
                for token in phrase:
                    postings.setdefault(token, []).append(len(owners))
                owners.append(position)
                lengths.append(len(phrase))
        self._owner = np.array(owners, dtype=np.int64)
        self._length = np.array(lengths, dtype=np.int64)
        self._postings = {t: np.array(ids, dtype=np.int64) for t, ids in postings.items()}

    def __len__(self) -> int:
        return len(self._owner)

    def matches(self, text: str) -> np.ndarray:
        """How many of each runbook's phrases have all their tokens in ``text``."""
        result = np.zeros(self.size, dtype=np.float64)
        if not len(self._owner):
            return result
        hits = [self._postings[t] for t in set(tokenize(text)) if t in self._postings]
        if not hits:
            return result
        counts = np.bincount(np.concatenate(hits), minlength=len(self._owner))
        matched = np.flatnonzero(counts >= self._length)
        np.add.at(result, self._owner[matched], 1.0)
        return result


class QuotedRuns:
    """Runs of ``size`` consecutive tokens of some runbooks' quotes (by position), matched
    against error texts: a dictionary from each run to the runbooks quoting it, so a query
    looks up each window of its own tokens once (work linear in the error text)."""

    def __init__(self, quotes: Sequence[Sequence[str]], size: int = MIN_QUOTED_TOKENS) -> None:
        self.size = len(quotes)
        self.run = size
        owners: dict[tuple[str, ...], set[int]] = {}
        for position, own in enumerate(quotes):
            for quote in own:
                tokens = tokenize(quote)
                for start in range(len(tokens) - size + 1):
                    owners.setdefault(tuple(tokens[start : start + size]), set()).add(position)
        self._owners = {run: np.array(sorted(ids), dtype=np.int64) for run, ids in owners.items()}

    def __len__(self) -> int:
        return len(self._owners)

    def matches(self, text: str) -> np.ndarray:
        """1.0 for each runbook one of whose runs occurs in ``text``'s tokens, else 0.0."""
        result = np.zeros(self.size, dtype=np.float64)
        if not self._owners:
            return result
        tokens = tokenize(text)
        for start in range(len(tokens) - self.run + 1):
            owners = self._owners.get(tuple(tokens[start : start + self.run]))
            if owners is not None:
                result[owners] = 1.0
        return result
