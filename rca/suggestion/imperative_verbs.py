"""The imperative verbs an instruction opens with, read once from the knowledge file.

Two readers need them: the format rule (:func:`.validation.format_ok`) asks an action to
open with one, and the report reader (:mod:`.reported_clauses`) ends a reason clause at a
comma one follows. :mod:`.validation` imports :mod:`.reported_clauses` (through
:mod:`.limit_moves`), so the list lives here, below both, rather than in either.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = ["IMPERATIVE_VERBS", "VERBS_FILE", "verb_before_object"]

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
