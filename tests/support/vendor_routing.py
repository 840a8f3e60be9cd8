"""A vendor's error message, sent as a bare incident, through lexical retrieval and the
offline provider, as the vendor-message tests check it.

Lexical only (BM25 and the signal prior, no embedding model): unit tests do not load the
model, and a runbook written for a kind must be found by the words its vendor prints.
"""

from __future__ import annotations

import functools
from typing import Any

from rca.corpus.files import bundled_runbook_dir
from rca.evaluation.run import case_incident, load_bodies
from rca.retrieval.hybrid import Retrieved, search
from rca.retrieval.index import CorpusIndex, index_from_runbooks
from rca.retrieval.signals import build_signals
from rca.suggestion.context import AnalysisContext
from rca.suggestion.evidence import context_for, evidence_from_retrieved
from rca.suggestion.providers import Draft, OfflineProvider
from tests.support.evidence import bundled_runbooks


@functools.cache
def _lexical_index() -> CorpusIndex:
    return index_from_runbooks(list(bundled_runbooks().values()), embed=False)


@functools.cache
def _bodies() -> dict[str, str]:
    return load_bodies(bundled_runbook_dir(), list(bundled_runbooks()))


def route_message(error_type: str, message: str) -> tuple[list[Retrieved], AnalysisContext, Draft]:
    """What retrieval found (best first), what the provider saw and what it suggested."""
    return route_incident({"exception_type": error_type, "message": message})


def route_incident(payload: dict[str, Any]) -> tuple[list[Retrieved], AnalysisContext, Draft]:
    """:func:`route_message` for a whole incident as the API takes it (stacktrace, logs,
    shape_diff, inference_context)."""
    incident = case_incident(payload)
    found = search(build_signals(incident), None, k=5, index=_lexical_index())
    ctx = context_for(incident, evidence_from_retrieved(found, _bodies()))
    return found, ctx, OfflineProvider().suggest(ctx)
