"""The imperative verbs an instruction opens with, read once from the knowledge file.

Two readers need them: the format rule (:func:`.validation.format_ok`) asks an action to
open with one, and the report reader (:mod:`.reported_clauses`) ends a reason clause at a
comma one follows. :mod:`.validation` imports :mod:`.reported_clauses` (through
:mod:`.limit_moves`), so the list lives here, below both, rather than in either.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = ["IMPERATIVE_VERBS", "VERBS_FILE"]

#: The verbs are data: ``rca/knowledge/imperative-verbs.toml``.
VERBS_FILE = Path(__file__).resolve().parent.parent / "knowledge" / "imperative-verbs.toml"


def _verbs() -> frozenset[str]:
    with VERBS_FILE.open("rb") as handle:
        return frozenset(str(verb).lower() for verb in tomllib.load(handle)["verbs"])


#: Lower-case base forms ("set", "re-export"): what an action may start with.
IMPERATIVE_VERBS = _verbs()
