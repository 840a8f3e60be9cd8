"""Scoring against labelled cases (pure): retrieval's hit@1, hit@3, MRR@5 and empty rate;
suggestions' keyword match, abstentions and validation pass rate (of the final output and of
every candidate step before the offline provider's filter).

A hit is a retrieved runbook whose ``failure_class`` equals the case's category: users care
that the right *kind* of fix comes first, and several runbooks may cover one class. A case
whose category no runbook of the corpus has cannot be hit by any ranking, so each figure is
also given over the *covered* cases alone: on a team's own corpus that is the question
"when we have the runbook, does it come first?", apart from "which failures lack one?".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

__all__ = [
    "CaseResult",
    "Metrics",
    "SuggestMetrics",
    "SuggestResult",
    "format_suggest_table",
    "keyword_hit",
    "rank_of",
    "summarise",
    "summarise_suggestions",
]

MRR_DEPTH = 5


@dataclass(frozen=True)
class CaseResult:
    case_id: str
    category: str
    ranked_classes: tuple[str, ...]  # failure classes of the retrieved runbooks, best first
    ranked_slugs: tuple[str, ...] = ()
    #: the corpus holds a runbook of the case's class (only then can a ranking hit it)
    covered: bool = True


# The JSON report of `manage.py rca eval`; keys as the report has always spelled them.
MetricsReport = TypedDict(
    "MetricsReport",
    {
        "cases": int,
        "hit@1": float,
        "hit@3": float,
        "mrr@5": float,
        "empty": float,
        "per_category": dict[str, dict[str, float]],
        "misses_at_1": list[str],
        "covered": dict[str, float],
    },
)


class SuggestMetricsReport(TypedDict):
    cases: int
    keyword_match: float
    keyword_in_action: float
    abstained: float
    answered: dict[str, float]
    abstentions: list[str]
    validation_pass: float
    candidates: dict[str, float]
    per_category: dict[str, dict[str, float]]
    keyword_misses: list[str]
    invalid: list[str]


@dataclass
class Metrics:
    cases: int = 0
    hit1: float = 0.0
    hit3: float = 0.0
    mrr: float = 0.0  # MRR@5
    empty: float = 0.0
    per_category: dict[str, dict[str, float]] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)  # case ids without a hit@1
    #: the same figures over the cases whose class the corpus has (``cases``, ``hit@1``, ...)
    covered: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> MetricsReport:
        return {
            "cases": self.cases,
            "hit@1": round(self.hit1, 4),
            "hit@3": round(self.hit3, 4),
            "mrr@5": round(self.mrr, 4),
            "empty": round(self.empty, 4),
            "per_category": self.per_category,
            "misses_at_1": self.misses,
            "covered": self.covered,
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


def _covered(results: Sequence[CaseResult]) -> dict[str, float]:
    """hit@1, hit@3 and MRR@5 over the covered cases, with how many there are."""
    covered = [r for r in results if r.covered]
    hit1, hit3, mrr, _ = _score(covered)
    return {
        "cases": len(covered),
        "hit@1": round(hit1, 4),
        "hit@3": round(hit3, 4),
        "mrr@5": round(mrr, 4),
    }


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
        covered=_covered(results),
    )


# --------------------------------------------------------------------------- suggestions


#: Quote marks are formatting, not words: runbooks write "Upgrade `jax`" where a case's
#: keyword says "upgrade jax". Dropped from both sides before matching, so a step is
#: never reworded (quotes removed) only to meet the metric.
_QUOTE_MARKS = str.maketrans("", "", "`'\"\u2018\u2019\u201c\u201d")


def _plain(text: str) -> str:
    return " ".join(text.lower().translate(_QUOTE_MARKS).split())


def keyword_hit(text: str, keywords: Sequence[str]) -> bool:
    """Whether ``text`` contains any of ``keywords``: a case-insensitive substring once
    quote marks are dropped and runs of whitespace are one space on both sides."""
    plain = _plain(text)
    return any(_plain(str(k)) in plain for k in keywords if _plain(str(k)))


@dataclass(frozen=True)
class SuggestResult:
    """The suggestion written for one labelled case and how it scored."""

    case_id: str
    category: str
    action: str
    reason: str
    runbook: str
    keyword_hit: bool  # a keyword in action + reason; never for an abstention
    valid: bool
    complaints: tuple[str, ...] = ()
    action_hit: bool = False  # a keyword in the action alone; never for an abstention
    abstained: bool = False  # "no confident suggestion": neither a hit nor helpful
    confidence: float = 0.0
    guess_hit: bool = False  # a keyword in the action + reason written, abstained or not
    #: Validation of every candidate step before the offline provider's filter
    #: (:class:`rca.suggestion.providers.step_ranking.CandidateAudit`): steps, valid,
    #: premise_contradicted, unfilled_placeholder.
    candidates: dict[str, int] = field(default_factory=dict)


@dataclass
class SuggestMetrics:
    cases: int = 0
    keyword_match: float = 0.0  # share of cases whose suggestion names any case keyword
    keyword_in_action: float = 0.0  # the same, in the action alone
    abstained: float = 0.0  # share of cases with no confident suggestion (never hits)
    #: Over the answered (not abstained) cases: keyword_match, keyword_in_action, cases; and
    #: how many abstentions' best guesses would have named a keyword (abstained_guess_hit).
    answered: dict[str, float] = field(default_factory=dict)
    abstentions: list[str] = field(default_factory=list)
    validation_pass: float = 0.0  # share of cases whose final suggestion passed validation
    #: Validation of the unfiltered candidate steps, summed over cases.
    candidates: dict[str, float] = field(default_factory=dict)
    per_category: dict[str, dict[str, float]] = field(default_factory=dict)
    keyword_misses: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)

    def as_dict(self) -> SuggestMetricsReport:
        return {
            "cases": self.cases,
            "keyword_match": round(self.keyword_match, 4),
            "keyword_in_action": round(self.keyword_in_action, 4),
            "abstained": round(self.abstained, 4),
            "answered": self.answered,
            "abstentions": self.abstentions,
            "validation_pass": round(self.validation_pass, 4),
            "candidates": self.candidates,
            "per_category": self.per_category,
            "keyword_misses": self.keyword_misses,
            "invalid": self.invalid,
        }


def _share(part: int | float, whole: int | float) -> float:
    return round(part / whole, 4) if whole else 0.0


def _candidate_figures(results: Sequence[SuggestResult]) -> dict[str, float]:
    """Unfiltered candidate steps: how many, and the shares passing validation, failing a
    premise, carrying an unfilled placeholder (empty when no result has an audit)."""
    audits = [r.candidates for r in results if r.candidates]
    if not audits:
        return {}
    total = {key: sum(a.get(key, 0) for a in audits) for key in _AUDIT_KEYS}
    steps = total["steps"]
    return {
        "cases": len(audits),
        "steps": steps,
        "validation_pass": _share(total["valid"], steps),
        "premise_contradicted": _share(total["premise_contradicted"], steps),
        "unfilled_placeholder": _share(total["unfilled_placeholder"], steps),
    }


_AUDIT_KEYS = ("steps", "valid", "premise_contradicted", "unfilled_placeholder")


def summarise_suggestions(results: Sequence[SuggestResult]) -> SuggestMetrics:
    n = len(results)
    if not n:
        return SuggestMetrics()
    by_category: dict[str, list[SuggestResult]] = defaultdict(list)
    for result in results:
        by_category[result.category].append(result)
    per_category = {
        category: {
            "cases": len(group),
            "keyword_match": round(sum(r.keyword_hit for r in group) / len(group), 4),
            "validation_pass": round(sum(r.valid for r in group) / len(group), 4),
        }
        for category, group in sorted(by_category.items())
    }
    answered = [r for r in results if not r.abstained]
    abstained = [r for r in results if r.abstained]
    return SuggestMetrics(
        cases=n,
        keyword_match=sum(r.keyword_hit for r in results) / n,
        keyword_in_action=sum(r.action_hit for r in results) / n,
        abstained=len(abstained) / n,
        answered={
            "cases": len(answered),
            "keyword_match": _share(sum(r.keyword_hit for r in answered), len(answered)),
            "keyword_in_action": _share(sum(r.action_hit for r in answered), len(answered)),
            "abstained_guess_hit": sum(r.guess_hit for r in abstained),
        },
        abstentions=[r.case_id for r in abstained],
        validation_pass=sum(r.valid for r in results) / n,
        candidates=_candidate_figures(results),
        per_category=per_category,
        keyword_misses=[r.case_id for r in results if not r.keyword_hit],
        invalid=[r.case_id for r in results if not r.valid],
    )


def format_suggest_table(metrics: SuggestMetrics, results: Sequence[SuggestResult] = ()) -> str:
    """Overall and per-category keyword match / validation pass; with ``results``, each
    case's action, cited runbook and confidence (``-`` marks a keyword miss, ``?`` an
    abstention, ``!`` an invalid one)."""
    answered = metrics.answered
    lines = [
        f"{'keyword match'.ljust(30)}{metrics.keyword_match:.3f}",
        f"{'keyword in action'.ljust(30)}{metrics.keyword_in_action:.3f}",
        f"{'abstained'.ljust(30)}{metrics.abstained:.3f}"
        + (
            f"  ({len(metrics.abstentions)}: neither hits nor helpful)"
            if metrics.abstentions
            else ""
        ),
    ]
    if metrics.abstentions:
        lines.append(
            f"{'answered: keyword match'.ljust(30)}{answered.get('keyword_match', 0.0):.3f}"
            f"  (in action {answered.get('keyword_in_action', 0.0):.3f},"
            f" {answered.get('cases', 0):g} cases; abstained guesses that would have hit:"
            f" {answered.get('abstained_guess_hit', 0):g})"
        )
    candidates = metrics.candidates
    if candidates:
        lines += [
            f"{'validation pass, candidates'.ljust(30)}{candidates['validation_pass']:.3f}"
            f"  ({candidates['steps']:g} steps before the filter; failing a premise"
            f" {candidates['premise_contradicted']:.3f}, unfilled placeholder"
            f" {candidates['unfilled_placeholder']:.3f})",
            f"{'validation pass, final output'.ljust(30)}{metrics.validation_pass:.3f}",
        ]
    else:
        lines.append(f"{'validation pass'.ljust(30)}{metrics.validation_pass:.3f}")
    if metrics.per_category:
        lines += ["", "per category (keyword / valid)"]
    for category, figures in metrics.per_category.items():
        lines.append(
            f"{category} ({figures['cases']:g})".ljust(30)
            + f"{figures['keyword_match']:.2f}/{figures['validation_pass']:.2f}"
        )
    if results:
        lines.append("")
    for r in results:
        mark = ("?" if r.abstained else "+" if r.keyword_hit else "-") + (" " if r.valid else "!")
        guess = "no confident suggestion; guess: " if r.abstained else ""
        lines.append(f"{mark} {r.case_id} [{r.runbook}] {guess}{r.action} ({r.confidence:.2f})")
        lines.extend(f"     invalid: {c}" for c in r.complaints)
    if metrics.keyword_misses:
        lines.append(f"\nno keyword for {', '.join(metrics.keyword_misses)}")
    if metrics.invalid:
        lines.append(f"invalid for {', '.join(metrics.invalid)}")
    return "\n".join(lines)
