"""Where sentences end: the one rule for runbook prose, incident messages and LLM answers.

Chunking splits over-long runbook paragraphs here, the offline composer takes a step's
first sentence, the step ranker weighs an incident message sentence by sentence, and the
validator refuses an action of more than one sentence. One rule, so the four can never
disagree about what a sentence is.

A sentence ends at ``.``, ``!`` or ``?`` (the mark stays with it) followed by whitespace
and something that starts a sentence: a capital letter, a backtick, ``*``, ``(`` or a
quote. "e.g.", "i.e.", "vs." and "etc." are abbreviations, not ends. A line break alone
ends nothing (runbooks are hard-wrapped Markdown); callers whose text is made of lines
(incident messages) split it into lines first.

It reads attacker-written text (incidents, LLM output), so the pattern is RE2 (linear
time); the abbreviation check looks back a fixed few characters per candidate, which RE2
cannot (no lookbehind).
"""

from __future__ import annotations

from collections.abc import Iterator

from ingest.linear_regex import compile as linear

__all__ = ["ABBREVIATIONS", "first_sentence_end", "split_sentences"]

#: A mark (group 1), the whitespace after it (group 2), and a sentence start.
_CANDIDATE = linear(r"([.!?])(\s+)[A-Z`*(\"']")
#: Marks that end these words end no sentence (when the word is not part of a longer one).
ABBREVIATIONS: tuple[str, ...] = ("e.g.", "i.e.", "vs.", "etc.")


def _is_abbreviation(text: str, end: int) -> bool:
    """Whether the mark just before ``end`` closes an abbreviation such as "e.g."."""
    for abbreviation in ABBREVIATIONS:
        if text.endswith(abbreviation, 0, end):
            before = end - len(abbreviation) - 1
            if before < 0 or not (text[before].isalnum() or text[before] == "_"):
                return True
    return False


def _breaks(text: str) -> Iterator[tuple[int, int]]:
    """(end of a sentence, start of the next) for every sentence break of ``text``."""
    for match in _CANDIDATE.finditer(text):
        end = match.end(1)
        if not _is_abbreviation(text, end):
            yield end, match.end(2)


def first_sentence_end(text: str) -> int:
    """Where the first sentence of ``text`` ends (``len(text)`` when it is one sentence)."""
    return next((end for end, _ in _breaks(text)), len(text))


def split_sentences(text: str) -> list[str]:
    """``text`` cut into its sentences, in order; the whitespace between them is dropped."""
    pieces: list[str] = []
    start = 0
    for end, following in _breaks(text):
        pieces.append(text[start:end])
        start = following
    pieces.append(text[start:])
    return pieces
