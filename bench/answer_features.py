"""Candidate confidence figures of an answer beyond retrieval / margin / step (issue 16).

Measured by ``bench/confidence_features.py`` on the rows of ``bench/confidence_rows.py``;
none is read by the product (2026-12-07: none raised right - wrong out of fold on every kind
of row; ``documented`` neither, on 545 dev cases that afternoon: docs/MEASUREMENTS.md). Each
is computed from what the offline provider has when it decides: the context, the retrieved
runbooks' own scores, the ranked candidate steps.

- ``agree``: how many of the two rankers put the answer's runbook first among the retrieved
  runbooks: +1 for the highest BM25, +1 for the highest cosine (0..2);
- ``ident``: the share of the incident's distinctive identifiers (its exception class unless a
  builtin one; the ``--flags``, UPPER_CASE codes, snake_case and CamelCase names of its
  message) that the answer's runbook (title, retrieved chunk, remediation) names literally;
  0 when the incident has none;
- ``grounded``: the share of the chosen step's action words (all its wordings) the incident
  says anywhere (message, frames, logs, context); 0 without a chosen step;
- ``documented`` (2026-12-07 afternoon): 1 when the chosen step rests on a documented fact the
  incident matched: it fills the release-notes row that matches the incident
  (``Candidate.documented``), or a vendor table's pairing (``{documented-pairing}`` with a
  value), or one of its ``fits`` facts holds (confirmed, not merely not contradicted); 0
  without a chosen step or for the message's own advice. Its parts: ``x_doc_row``,
  ``x_doc_pairing``, ``x_fits``.

Exploratory variants (``x_``, measured for the picture, not candidates of the 2026-12-07
decision rule): ``x_bm25_top`` / ``x_dense_top`` (each half of ``agree``), ``x_bm25_share``
(the runbook's BM25 over the best retrieved), ``x_cos_gap`` (best retrieved cosine minus the
runbook's), ``x_step_ident`` (``ident`` on the chosen step's own text), ``x_has_ident``
(the incident has an identifier at all).
"""

from __future__ import annotations

import builtins
from typing import Any

from ingest.linear_regex import compile as linear

#: Code-like names in an error message: ``--flags``, UPPER_CASE codes (``RESOURCE_EXHAUSTED``),
#: linker-style codes (``LNK1181``), snake_case option names (``find_unused_parameters``),
#: CamelCase class names (``AutoTokenizer``).
_IDENTIFIER = linear(
    r"--[A-Za-z][A-Za-z0-9_-]+"
    r"|\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+\b"
    r"|\b[A-Z]{2,}[0-9]{3,}\b"
    r"|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"
    r"|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b"
)
_MESSAGE_CHARS = 4000  # a longer message is mostly a dump; its head names the error


def _generic_exception(name: str) -> bool:
    """A Python builtin exception (``RuntimeError``): it names no failure of its own."""
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def identifiers(ctx: Any) -> set[str]:
    """The incident's distinctive identifiers, lower-cased."""
    message = (ctx.message or "")[:_MESSAGE_CHARS]
    found = {match.lower() for match in _IDENTIFIER.findall(message)}
    short = (ctx.error_type or "").rsplit(".", 1)[-1]
    if short and not _generic_exception(short):
        found.add(short.lower())
    return {name for name in found if name and not _generic_exception(name)}


def _share(names: set[str], text: str) -> float:
    text = text.lower()
    return sum(name in text for name in names) / len(names) if names else 0.0


def answer_features(ctx: Any, found: list[Any], slug: str) -> dict[str, float]:
    """The figures above for the answer citing runbook ``slug``; ``found`` is what retrieval
    returned for ``ctx`` (its ``bm25`` and ``cosine`` per runbook)."""
    from rca.suggestion.providers.incident_view import evidence_words
    from rca.suggestion.providers.step_ranking import rank_steps

    runbooks = [r for r in found if getattr(r, "kind", "runbook") == "runbook"]
    mine = next((r for r in runbooks if r.slug == slug), None)
    best_bm25 = max((r.bm25 for r in runbooks), default=0.0)
    best_cos = max((r.cosine for r in runbooks), default=0.0)
    bm25_top = float(mine is not None and best_bm25 > 0 and mine.bm25 >= best_bm25)
    dense_top = float(mine is not None and best_cos > 0 and mine.cosine >= best_cos)
    item = next((e for e in ctx.evidence if e.kind == "runbook" and e.slug == slug), None)
    names = identifiers(ctx)
    runbook_text = " ".join([item.title, item.text, *item.remediation]) if item else ""
    ranked = rank_steps(ctx)
    chosen = ranked[0] if ranked else None
    step_text = chosen.evidence.remediation[chosen.position] if chosen and not chosen.advice else ""
    grounded = 0.0
    if chosen is not None and chosen.step_action_tokens:
        said = evidence_words(ctx)
        tokens = chosen.step_action_tokens
        grounded = sum(token in said for token in tokens) / len(tokens)
    documented = _documented(ctx, chosen)
    return {
        "agree": bm25_top + dense_top,
        "ident": round(_share(names, runbook_text), 4),
        "grounded": round(grounded, 4),
        "x_bm25_top": bm25_top,
        "x_dense_top": dense_top,
        "x_bm25_share": round(mine.bm25 / best_bm25, 4) if mine and best_bm25 > 0 else 0.0,
        "x_cos_gap": round(best_cos - mine.cosine, 4) if mine else 1.0,
        "x_step_ident": round(_share(names, step_text), 4),
        "x_has_ident": float(bool(names)),
        "documented": float(any(documented.values())),
        **{f"x_{name}": float(value) for name, value in documented.items()},
    }


def _documented(ctx: Any, chosen: Any) -> dict[str, bool]:
    """The documented facts the chosen step rests on (``documented`` above), by kind."""
    from rca.suggestion.providers.incident_view import read_incident
    from rca.suggestion.step_values import incident_values

    if chosen is None or chosen.advice:
        return {"doc_row": False, "doc_pairing": False, "fits": False}
    written = chosen.evidence.remediation[chosen.position]
    pairing = "{documented-pairing}" in written and bool(
        incident_values(ctx).get("documented-pairing")
    )
    fits = bool(set(chosen.applies.fits) & read_incident(ctx).facts)
    return {"doc_row": bool(chosen.documented), "doc_pairing": pairing, "fits": fits}
