"""Evidence from the bundled runbooks, ranked as retrieval would hand it to a provider.

Shared by the offline provider's tests, which build contexts by hand to say which
runbooks were found and how high each ranked.
"""

from __future__ import annotations

from ingest.parsing.shapes import extract_shape_diff
from rca.corpus.files import Runbook, bundled_runbook_dir, load_directory
from rca.suggestion.context import AnalysisContext, Evidence, evidence_from_runbook
from rca.suggestion.providers import Draft


def bundled_runbooks() -> dict[str, Runbook]:
    """The bundled runbooks by slug."""
    return {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}


def evidence(*ranked: tuple[str, float]) -> list[Evidence]:
    """Evidence for each (slug, score) pair, in the order given."""
    runbooks = bundled_runbooks()
    return [evidence_from_runbook(runbooks[slug], score) for slug, score in ranked]


def message_context(
    message: str, *ranked: tuple[str, float], logs: tuple[str, ...] = ()
) -> AnalysisContext:
    """A context holding only an error message (its shapes read from it), log lines and the
    ranked runbooks: what the fact and premise tests vary."""
    return AnalysisContext(
        error_type="",
        message=message,
        shape_diff=extract_shape_diff(message),
        logs=[{"message": line} for line in logs],
        evidence=evidence(*ranked),
    )


def draft(action: str, runbook: str) -> Draft:
    """A provider's answer with this action citing this runbook, for validation tests."""
    return Draft(action, "Because.", runbook, 0.5, "test", "test")
