"""Scoring retrieval against labelled cases: hit@1, hit@3, MRR@5, empty rate (pure).

A hit is a retrieved runbook whose ``failure_class`` equals the case's category: users care
that the right *kind* of fix comes first, and several runbooks may cover one class.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["CaseResult", "Metrics", "format_table", "rank_of", "summarise"]

MRR_DEPTH = 5


@dataclass(frozen=True)
class CaseResult:
    case_id: str
    category: str
    ranked_classes: tuple[str, ...]  # failure classes of the retrieved runbooks, best first
    ranked_slugs: tuple[str, ...] = ()


@dataclass
class Metrics:
    cases: int = 0
    hit1: float = 0.0
    hit3: float = 0.0
    mrr: float = 0.0  # MRR@5
    empty: float = 0.0
    per_category: dict[str, dict[str, float]] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)  # case ids without a hit@1

    def as_dict(self) -> dict:
        return {
            "cases": self.cases,
            "hit@1": round(self.hit1, 4),
            "hit@3": round(self.hit3, 4),
            "mrr@5": round(self.mrr, 4),
            "empty": round(self.empty, 4),
            "per_category": self.per_category,
            "misses_at_1": self.misses,
        }


def rank_of(result: CaseResult) -> int | None:
    """1-based rank of the first runbook of the right class, ``None`` when absent."""
    for rank, failure_class in enumerate(result.ranked_classes, start=1):
        if failure_class == result.category:
            return rank
    return None


def _score(results: Sequence[CaseResult]) -> tuple[float, float, float, float]:
    if not results:
        return 0.0, 0.0, 0.0, 0.0
    ranks = [rank_of(r) for r in results]
    n = len(results)
    hit1 = sum(1 for r in ranks if r == 1) / n
    hit3 = sum(1 for r in ranks if r is not None and r <= 3) / n
    mrr = sum(1.0 / r for r in ranks if r is not None and r <= MRR_DEPTH) / n
    empty = sum(1 for r in results if not r.ranked_classes) / n
    return hit1, hit3, mrr, empty


def summarise(results: Sequence[CaseResult]) -> Metrics:
    hit1, hit3, mrr, empty = _score(results)
    by_category: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        by_category[result.category].append(result)
    per_category = {}
    for category in sorted(by_category):
        c1, c3, cm, _ = _score(by_category[category])
        per_category[category] = {
            "cases": len(by_category[category]),
            "hit@1": round(c1, 4),
            "hit@3": round(c3, 4),
            "mrr@5": round(cm, 4),
        }
    return Metrics(
        cases=len(results),
        hit1=hit1,
        hit3=hit3,
        mrr=mrr,
        empty=empty,
        per_category=per_category,
        misses=[r.case_id for r in results if rank_of(r) != 1],
    )


def format_table(metrics: dict[str, Metrics]) -> str:
    """Overall and per-category figures, one column per run (mode or fusion strategy)."""
    names = list(metrics)
    width = max([12, *(len(n) for n in names)]) + 2
    lines = ["".ljust(30) + "".join(n.rjust(width) for n in names)]
    for label, attr in (("hit@1", "hit1"), ("hit@3", "hit3"), ("MRR@5", "mrr"), ("empty", "empty")):
        values = "".join(f"{getattr(metrics[n], attr):.3f}".rjust(width) for n in names)
        lines.append(label.ljust(30) + values)
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
