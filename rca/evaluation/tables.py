"""Text tables of retrieval metrics, as `manage.py rca eval` prints them: one column per run
(:func:`format_table`), or one row per run and a column per corpus (:func:`format_corpora`).
"""

from __future__ import annotations

from rca.evaluation.metrics import Metrics

__all__ = ["format_corpora", "format_table"]


def format_table(metrics: dict[str, Metrics]) -> str:
    """Overall and per-category figures, one column per run (mode or fusion strategy)."""
    names = list(metrics)
    width = max([12, *(len(n) for n in names)]) + 2
    lines = ["".ljust(30) + "".join(n.rjust(width) for n in names)]
    for label, attr in (("hit@1", "hit1"), ("hit@3", "hit3"), ("MRR@5", "mrr"), ("empty", "empty")):
        values = "".join(f"{getattr(metrics[n], attr):.3f}".rjust(width) for n in names)
        lines.append(label.ljust(30) + values)
    if any(m.covered.get("cases") != m.cases for m in metrics.values()):
        values = "".join(_covered_cell(metrics[n]).rjust(width) for n in names)
        lines.append("hit@1 of covered cases".ljust(30) + values)
    categories = sorted({c for m in metrics.values() for c in m.per_category})
    if categories:
        lines.append("")
        lines.append("per category (hit@1 / hit@3)".ljust(30))
    for category in categories:
        cells = []
        for name in names:
            figures = metrics[name].per_category.get(category)
            cell = f"{figures['hit@1']:.2f}/{figures['hit@3']:.2f}" if figures else "-"
            cells.append(cell.rjust(width))
        count = next(m.per_category[category]["cases"] for m in metrics.values())
        lines.append(f"{category} ({count:g})".ljust(30) + "".join(cells))
    for name in names:
        if metrics[name].misses:
            lines.append(f"\n{name}: not first for {', '.join(metrics[name].misses)}")
    return "\n".join(lines)


def _covered_cell(metrics: Metrics) -> str:
    """``hit@1 (n)`` over the cases whose class the corpus has."""
    return f"{metrics.covered.get('hit@1', 0.0):.3f} ({metrics.covered.get('cases', 0):g})"


def format_corpora(
    reports: dict[str, dict[str, Metrics]], extra: dict[str, dict[str, Metrics]] | None = None
) -> str:
    """One row per run (plus ``extra`` rows, e.g. cross-validated), one column per corpus:
    ``hit@1 / MRR@5``."""
    corpora = list(reports)
    runs = {
        run: {c: reports[c][run] for c in corpora if run in reports[c]}
        for run in reports[corpora[0]]
    }
    runs.update({name: per for name, per in (extra or {}).items()})
    width = max([16, *(len(c) + 2 for c in corpora)])
    label = max([20, *(len(r) + 2 for r in runs)])
    lines = ["".ljust(label) + "".join(c.rjust(width) for c in corpora)]
    for run, per in runs.items():
        cells = [
            (f"{per[c].hit1:.3f} / {per[c].mrr:.3f}" if c in per else "-").rjust(width)
            for c in corpora
        ]
        lines.append(run.ljust(label) + "".join(cells))
    if any(m.covered.get("cases") != m.cases for per in runs.values() for m in per.values()):
        lines.append("hit@1 (cases) of the cases of a kind the corpus has a runbook for")
        for run, per in runs.items():
            cells = [(_covered_cell(per[c]) if c in per else "-").rjust(width) for c in corpora]
            lines.append(run.ljust(label) + "".join(cells))
    return "\n".join(lines)
