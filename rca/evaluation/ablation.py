"""Which evidence moves the ranking: the default run with one part of the query removed.

Each part of :class:`rca.retrieval.signals.Signals` (the message, the user's own frames,
log lines, inference context, shapes, ...) is emptied in turn, the query is rebuilt and
re-embedded, and the default run is scored again. A part whose removal lowers hit@1
carries evidence retrieval uses; one whose removal raises it adds noise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from rca.evaluation.metrics import Metrics, summarise
from rca.evaluation.run import DEFAULT_RUN, Prepared, case_incident, prepare, results
from rca.retrieval.signals import Signals, build_signals

__all__ = ["PARTS", "ablate", "format_ablation"]

#: Evidence part -> the Signals fields it empties; the names are the parts of the BM25
#: query (:func:`rca.retrieval.query.query_parts`).
PARTS: dict[str, tuple[str, ...]] = {
    "error type": ("error_type", "error_type_short"),
    "message": ("message", "message_normalised"),
    "chained exceptions": ("chained",),
    "own-code frames": ("frames", "app_code"),
    "library frames": ("library_frames", "libraries"),
    "log lines": ("log_messages", "error_codes"),
    "shapes": ("shapes",),
    "inference context": ("context",),
}


def _without(signals: Signals, names: tuple[str, ...]) -> Signals:
    empty: dict[str, Any] = {}
    for name in names:
        value = getattr(signals, name)
        empty[name] = type(value)()
    return dataclasses.replace(signals, **empty)


def ablate(
    prepared: Mapping[str, Prepared], run: str = DEFAULT_RUN, k: int = 5
) -> dict[str, dict[str, Metrics]]:
    """``{part: {corpus: metrics}}``, with ``"(all evidence)"`` first as the reference."""
    report: dict[str, dict[str, Metrics]] = {
        "(all evidence)": {name: summarise(results(p, run, k=k)) for name, p in prepared.items()}
    }
    signals_of = {
        name: [build_signals(case_incident(c)) for c in p.cases] for name, p in prepared.items()
    }
    for part, names in PARTS.items():
        report[part] = {}
        for name, p in prepared.items():
            ablated = [_without(s, names) for s in signals_of[name]]
            report[part][name] = summarise(results(prepare(p.cases, p.index, ablated), run, k=k))
    return report


def format_ablation(report: dict[str, dict[str, Metrics]], run: str = DEFAULT_RUN) -> str:
    """hit@1 (and its change) per corpus with each part removed."""
    corpora = list(next(iter(report.values())))
    width = max([14, *(len(c) + 2 for c in corpora)])
    base = report["(all evidence)"]
    lines = [
        f"ablation: {run} hit@1 with one part of the query removed (change vs all evidence)",
        "removed".ljust(22) + "".join(c.rjust(width) for c in corpora),
    ]
    for part, per_corpus in report.items():
        cells = []
        for corpus in corpora:
            value = per_corpus[corpus].hit1
            delta = value - base[corpus].hit1
            cell = f"{value:.3f}" if part == "(all evidence)" else f"{value:.3f} ({delta:+.3f})"
            cells.append(cell.rjust(width))
        lines.append(part.ljust(22) + "".join(cells))
    return "\n".join(lines)
