"""Whether a runbook step quotes the incident's own error wording.

Some steps state when they apply in the words the failure prints: "create the client with
`ssl=True` when the error says `Trying to connect an http1.x server`", "... when `Cannot
convert a symbolic Tensor ... to a numpy array` is raised inside TensorFlow's own layers".
Such a quote is the step's condition written by its author; when the incident's message or
error log lines say it, the condition holds, and the step is the one about this incident
rather than merely the runbook's first (:mod:`rca.suggestion.providers.step_ranking`).

A quote is a backticked span of the step of at least :data:`MIN_QUOTE_WORDS` words (runs
of non-space characters holding a letter): a phrase, not a single name (an identifier such
as `ignore_mismatched_sizes=True` names a fix, which a message may mention among others).
``...`` or ``…`` inside it stands for any text, so its pieces must appear in order. Case,
quote marks and runs of whitespace are ignored on both sides; a span with an unfilled
``{placeholder}`` is no quote. Plain substring search over a capped text: no pattern runs
over incident text except RE2's linear whitespace rule (:mod:`ingest.linear_regex`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["MIN_QUOTE_WORDS", "quoted_text", "step_quotes", "quotes_incident"]

MIN_QUOTE_WORDS = 3
"""How many words a backticked span needs to count as a quote of an error's wording. Two
to four select the same steps on dev (``rca eval --realworld-dev``); one would count single
identifiers, which steps name as fixes, not as conditions."""

_MAX_TEXT = 20_000
_BACKTICKED = linear(r"`([^`]{1,400})`")
_ELLIPSIS = linear(r"\.\.\.|…")
_SPACE = linear(r"\s+")
_DROPPED = str.maketrans({"'": None, '"': None, "`": None})


def _plain(text: str) -> str:
    """Lower-cased, quote marks dropped, every run of whitespace one space."""
    return _SPACE.sub(" ", text.translate(_DROPPED)).strip().lower()


@functools.lru_cache(maxsize=4096)
def step_quotes(step: str) -> tuple[tuple[str, ...], ...]:
    """The quotes of a step's text: each backticked span of at least :data:`MIN_QUOTE_WORDS`
    words, as its plain pieces between ellipses."""
    found = []
    for span in _BACKTICKED.findall(step):
        if "{" in span:
            continue
        pieces = tuple(p for p in (_plain(part) for part in _ELLIPSIS.split(span)) if p)
        words = [w for piece in pieces for w in piece.split(" ") if any(c.isalpha() for c in w)]
        if len(words) >= MIN_QUOTE_WORDS:
            found.append(pieces)
    return tuple(found)


def quoted_text(error_type: str, message: str, error_logs: Iterable[str]) -> str:
    """What a step's quote is looked up in: the error type, the message and the error log
    lines, plain and capped."""
    lines = first_lines([error_type or "", message or "", *error_logs])
    return _plain("\n".join(lines)[:_MAX_TEXT])


def quotes_incident(step: str, shown: str) -> bool:
    """Whether one of ``step``'s quotes is in ``shown`` (:func:`quoted_text`), its pieces
    in order."""
    for pieces in step_quotes(step):
        at = 0
        for piece in pieces:
            found = shown.find(piece, at)
            if found < 0:
                break
            at = found + len(piece)
        else:
            return True
    return False
