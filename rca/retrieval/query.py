"""The BM25 query of an incident: which evidence goes in, in what order, at what weight (pure).

An incident carries more than its message: the user's own frames, library frames, log
lines, shape diffs, inference context. Each becomes one *part* of the query with a weight
from :class:`rca.retrieval.weights.QueryWeights`, listed in the order evidence is trusted:
the message, then the user's own code (innermost frame first), then what was raised inside
libraries, logs, shapes and context. The same parts drive ``rca eval --ablation``, so the
table names exactly what the query was built from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rca.retrieval.tokens import tokenize
from rca.retrieval.weights import DEFAULT_QUERY_WEIGHTS, QueryWeights

__all__ = ["QueryPart", "bm25_query", "query_parts"]

_PLACEHOLDERS = ("<n>", "<hex>", "<path>", "<size>", "<url>")


class Signals(Protocol):
    """What the query reads of :class:`rca.retrieval.signals.Signals` (which builds its
    query here, so this module does not import it)."""

    error_type: str
    message_normalised: str
    chained: list[str]
    app_code: list[str]
    library_frames: list[str]
    libraries: list[str]
    log_messages: list[str]
    error_codes: list[str]
    shapes: list[str]
    context: dict[str, str]


@dataclass(frozen=True)
class QueryPart:
    name: str  # evidence part, as ``rca eval --ablation`` names it
    text: str
    weight: float


def _decaying(name: str, texts: list[str], first: float, decay: float) -> list[QueryPart]:
    """One part per text, innermost first, each ``decay`` times the one before it."""
    return [QueryPart(name, text, first * decay**depth) for depth, text in enumerate(texts)]


def query_parts(signals: Signals, w: QueryWeights = DEFAULT_QUERY_WEIGHTS) -> list[QueryPart]:
    """The evidence of ``signals`` as weighted texts, most trusted first."""
    parts = [
        QueryPart("error type", signals.error_type, w.message),
        QueryPart("message", signals.message_normalised, w.message),
        *(QueryPart("chained exceptions", text, w.chained) for text in signals.chained),
        *_decaying("own-code frames", signals.app_code, w.app_code, w.app_decay),
        *_decaying("library frames", signals.library_frames, w.library_frames, w.app_decay),
        QueryPart("library frames", " ".join(signals.libraries), w.libraries),
        *(QueryPart("log lines", text, w.log_lines) for text in signals.log_messages),
        *(QueryPart("log lines", code, w.log_lines) for code in signals.error_codes),
        *(QueryPart("shapes", text, w.shapes) for text in signals.shapes),
        *(
            QueryPart("inference context", value, w.context)
            for key, value in signals.context.items()
            if key != "model_id"  # a model's name says which model, not what went wrong
        ),
    ]
    return [part for part in parts if part.text.strip() and part.weight > 0]


def _tokens(text: str) -> list[str]:
    for placeholder in _PLACEHOLDERS:
        text = text.replace(placeholder, " ")
    return tokenize(text)


def bm25_query(signals: Signals, w: QueryWeights = DEFAULT_QUERY_WEIGHTS) -> dict[str, float]:
    """Token -> weight: each part's tokens at the part's weight, summed over parts and
    capped at ``w.token_cap`` (a word every part repeats must not drown the rest)."""
    weights: dict[str, float] = {}
    for part in query_parts(signals, w):
        for token in _tokens(part.text):
            weights[token] = weights.get(token, 0.0) + part.weight
    return {token: min(value, w.token_cap) for token, value in weights.items()}
