"""The imperative verbs an instruction opens with, read once from the knowledge file.

Two readers need them: the format rule (:func:`.validation.format_ok`) asks an action to
open with one, and the report reader (:mod:`.reported_clauses`) ends a reason clause at a
comma one follows. :mod:`.validation` imports :mod:`.reported_clauses` (through
:mod:`.limit_moves`), so the list lives here, below both, rather than in either.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = [
    "IMPERATIVE_VERBS",
    "VERBS_FILE",
    "past_lead_clauses",
    "verb_before_object",
    "without_asides",
]

#: The verbs are data: ``rca/knowledge/imperative-verbs.toml``.
VERBS_FILE = Path(__file__).resolve().parent.parent / "knowledge" / "imperative-verbs.toml"


def _words(key: str) -> frozenset[str]:
    with VERBS_FILE.open("rb") as handle:
        return frozenset(str(word).lower() for word in tomllib.load(handle)[key])


#: Lower-case base forms ("set", "re-export"): what an action may start with.
IMPERATIVE_VERBS = _words("verbs")
#: Verbs read first as nouns ("index"): an action opens with one only before a determiner.
_NOUN_FIRST = _words("noun_first")
_DETERMINERS = _words("determiners")


def verb_before_object(first: str, rest: str) -> bool:
    """Whether ``first`` (lower case) is a noun-first verb that ``rest`` gives an object
    opening with a determiner: "Index the image as x[None]", not "Index 3 is out of range"."""
    following = rest.lstrip("`*_\"' ").split(" ", 1)[0].lower()
    return first in _NOUN_FIRST and following in _DETERMINERS


#: Lead-clause openers as word tuples ("instead of"), longest first.
_OPENERS = tuple(sorted((tuple(w.split()) for w in _words("lead_clause_openers")), key=len)[::-1])
_MARKS = "`*_\"' "
_OPEN, _CLOSE = "([{", ")]}"
#: Lead clauses read before giving up: "If X, when Y, set Z" is two.
_MAX_LEADS = 3


def _top_level_comma(text: str) -> int:
    """The first comma followed by a space outside brackets and backticks, or -1
    ("If the image is (256, 256, 3), permute it": the comma after the parenthesis)."""
    depth, code = 0, False
    for at, char in enumerate(text):
        if char == "`":
            code = not code
        elif code:
            continue
        elif char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0 and text[at + 1 : at + 2].isspace():
            return at
    return -1


def past_lead_clauses(action: str) -> str:
    """``action`` from where its instruction starts: past lead clauses an opener word starts
    and a comma ends ("Instead of the default 32768, pass ..." -> "pass ..."), and a "then"
    after one. An action with no such clause comes back unchanged."""
    text = action
    for _ in range(_MAX_LEADS):
        words = tuple(word.lower() for word in text.lstrip(_MARKS).split(None, 3)[:3])
        if not any(words[: len(opener)] == opener for opener in _OPENERS):
            break
        comma = _top_level_comma(text)
        if comma < 0:
            break
        text = text[comma + 1 :].lstrip()
        head, _, rest = text.partition(" ")
        if head.lower() == "then" and rest:
            text = rest
    return text


def without_asides(text: str) -> str:
    """``text`` with what brackets hold blanked (same length): an aside ("(it would leave
    every layer random)", "(512)") is no part of the instruction's wording."""
    chars, depth, code = list(text), 0, False
    for at, char in enumerate(text):
        if char == "`":
            code = not code
        if code and depth == 0:
            continue
        if char in _OPEN:
            depth += 1
        if depth:
            chars[at] = " "
        if char in _CLOSE and depth:
            depth -= 1
    return "".join(chars)
