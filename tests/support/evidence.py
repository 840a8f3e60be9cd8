"""Evidence from the bundled runbooks, ranked as retrieval would hand it to a provider.

Shared by the offline provider's tests, which build contexts by hand to say which
runbooks were found and how high each ranked.
"""

from __future__ import annotations

from rca.corpus.files import Runbook, bundled_runbook_dir, load_directory
from rca.suggestion.context import Evidence, evidence_from_runbook


def bundled_runbooks() -> dict[str, Runbook]:
    """The bundled runbooks by slug."""
    return {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}


def evidence(*ranked: tuple[str, float]) -> list[Evidence]:
    """Evidence for each (slug, score) pair, in the order given."""
    runbooks = bundled_runbooks()
    return [evidence_from_runbook(runbooks[slug], score) for slug, score in ranked]
