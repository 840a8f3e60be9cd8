"""The words that mark a mention in an answer as the old value, not the target, as patterns.

"Convert from (64, 224, 224, 3)", "instead of 8.4.1", "not `--fp16`", "the currently installed
535": the mention right after such a word is what the answer moves away from, turns down or
finds in place, and naming it is no step toward it. The words are data, in groups with the
reason each marks a mention (``rca/knowledge/old-mentions.toml``); a reader asks for the
groups that hold where it reads, so the readers (:mod:`.reused_failing`,
:mod:`.checks.conv_layout`, :mod:`.step_options`, :mod:`.limit_moves`, :mod:`.module_names`,
:mod:`.driver_targets`, :mod:`.prefix_shift`, :mod:`.build_variants`) share one vocabulary
and differ only by named groups.

Every pattern is RE2 (:mod:`ingest.linear_regex`).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear

__all__ = ["MENTIONS_FILE", "alternation", "anywhere", "before_mention", "groups"]

#: The vocabulary is data: ``rca/knowledge/old-mentions.toml``.
MENTIONS_FILE = Path(__file__).resolve().parent.parent / "knowledge" / "old-mentions.toml"
#: Letters a stem ("remov*") may take: remove, removed, removing, removal.
_STEM_LETTERS = 4
#: What an entry may hold: letters, spaces, hyphens, apostrophes and a final ``*``; none of
#: them is special in a regex outside a class, so an entry needs no escaping.
_ENTRY = linear(r"^[a-z][a-z' -]*\*?$")


@cache
def groups() -> dict[str, tuple[str, ...]]:
    """Each group's entries, lower case, as written in the knowledge file."""
    with MENTIONS_FILE.open("rb") as handle:
        data = tomllib.load(handle)["groups"]
    read = {name: tuple(str(w).lower() for w in group["words"]) for name, group in data.items()}
    bad = [word for words in read.values() for word in words if not _ENTRY.match(word)]
    if bad:
        raise ValueError(f"{MENTIONS_FILE.name}: entries must be words: {bad}")
    return read


def _entry(word: str) -> str:
    """One entry as a regex: words joined by any whitespace, an optional (and possibly
    typographic) apostrophe, a trailing ``*`` as a stem."""
    stem = word.endswith("*")
    parts = [part.replace("'", "['’]?") for part in word.rstrip("*").split()]
    return r"\s+".join(parts) + (rf"\w{{0,{_STEM_LETTERS}}}" if stem else "")


def alternation(*names: str) -> str:
    """The named groups' entries as one non-capturing alternation, longest first (so that a
    search ends after "no need to", not after "no"), for a reader that composes a pattern of
    its own around them. An unknown group name is an error, not an empty group."""
    known = groups()
    missing = [name for name in names if name not in known]
    if missing:
        raise KeyError(f"no such group in {MENTIONS_FILE.name}: {', '.join(missing)}")
    words = {word for name in names for word in known[name]}
    return "(?:" + "|".join(_entry(w) for w in sorted(words, key=lambda w: (-len(w), w))) + ")"


def before_mention(*names: str, then: str = r"\s*[=:]?\s*$") -> LinearPattern:
    """A pattern searched in the text right before a mention: one of the groups' words, then
    ``then`` (what may stand between the word and the mention, anchored at the end)."""
    return linear(r"\b" + alternation(*names) + then, ignore_case=True)


def anywhere(*names: str) -> LinearPattern:
    """A pattern of the groups' words as whole words anywhere (in a window of words before a
    mention, or a clause)."""
    return linear(r"\b" + alternation(*names) + r"\b", ignore_case=True)
