"""An answer that only removes a package when the incident shows a library missing or
mismatched at load time.

When the message says a binary could not load the shared library it was linked against
(``library-major-missing``, ``linker-library-missing``), an installed GPU build could not load
its CUDA libraries (``gpu-libraries-not-loaded``), or a library runs at another version than
the code was built for (``runtime-newer-than-build``, ``runtime-older-than-build``), what
fixes it is a library (or a build) that matches. An answer that removes packages and installs
nothing ("sudo apt-get remove libcudnn6", "Uninstall the CUDA 12 toolkit") leaves the program
with less to load, not the release it needs. Removals are read from command lines and prose
alike (:mod:`.command_moves`); an answer that also installs, upgrades or rebuilds anything
("uninstall onnxruntime and install onnxruntime-gpu") is a replacement and passes.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.corpus.step_metadata import FACTS
from rca.suggestion.command_moves import installs, removed_packages
from rca.suggestion.negated_clauses import said_parts
from rca.suggestion.package_moves import moves

__all__ = ["removal_violations"]

#: Facts that say the failing program needs a (matching) library at load time.
_NEEDS_LIBRARY = (
    "library-major-missing",
    "linker-library-missing",
    "gpu-libraries-not-loaded",
    "runtime-newer-than-build",
    "runtime-older-than-build",
)
_MAX_ACTION = 2000
#: Words by which an answer puts a package (or a build) in place of what it removes.
_PUTS_IN = linear(
    r"\b(?:install|reinstall|upgrade|downgrade|update|pin|build|rebuild|compile|recompile"
    r"|switch|replace|keep)\b",
    ignore_case=True,
)


def removal_violations(action: str, facts: Iterable[str]) -> list[str]:
    """Why removing what ``action`` removes cannot fix the incident (empty: it removes
    nothing, also puts something in place, or the incident needs no library)."""
    shown = [fact for fact in _NEEDS_LIBRARY if fact in set(facts)]
    text = (action or "")[:_MAX_ACTION]
    if not shown or not (removed := removed_packages(text)):
        return []
    if installs(text) or moves(text) or any(_PUTS_IN.search(part) for part in said_parts(text)):
        return []
    return [
        f"the incident shows {FACTS[shown[0]]}: removing {', '.join(removed[:3])} installs"
        " nothing the failing program can load; install the release it was built for, or a"
        " build made for the one installed"
    ]
