"""Choose the step ranking's retrieval weights out of fold, for the current fusion setting.

    SECRET_KEY=x .venv/bin/python bench/retrieval_steps.py --dump /tmp/steps.json --cv 5
    .venv/bin/python bench/retrieval_steps.py --rows /tmp/steps.json --cv 5

The step ranking reads retrieval twice (:mod:`rca.suggestion.providers.step_ranking`): which
runbooks below the top one lend steps (same failure class, fused score at most
``max_score_gap`` below the top's) and how much a step's runbook adds
(``runbook x (1 - gap)``). Both are in the fused score's units, so a fusion re-weighting can
move them: this bench re-chooses them on the training folds of the dev cases and scores the
held-out fold.

Dev cases only: the 221 that ``rca eval --realworld-dev --suggest`` reads
(``tests/data/dev_cases.jsonl`` and :data:`rca.evaluation.suite.REALWORLD_DEV_FILES`,
``split == "dev"``), run through retrieval as that eval runs them (hybrid, default fusion,
query embeddings, top 5) and the step ranking with every same-class runbook of the top 3
lending steps (the gate opened), so the gate and the weight can be re-applied here without
re-running retrieval. The message's own advice competes as the provider lets it: flat score,
and alone when the best non-advice runbook is more than the gate below an advice-only one.
Folds: the sorted ids dealt round-robin (:func:`rca.evaluation.crossval.fold_of`), as
``rca eval --cv`` splits.

Objective on the training folds (as before): fix terms in the chosen step's action, then
fewest right-runbook-wrong-step, then the grid's first (the current default). The runbook
weight also moves the chosen step's score, which the confidence reads, so every figure is
also given as the provider would answer with the current ``confidence_params.json``:
answered with the fix term in the action (``rca eval``'s fix term in action), answered
without it, abstained. The confidence map is not refitted per setting
(``bench/calibrate_confidence.py --cv`` checks a change).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from _env import REPO, setup_django

OPEN_GATE = 1e9
GAPS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, OPEN_GATE)
RUNBOOK = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0)


def _all_cases() -> list[dict[str, Any]]:
    from rca.evaluation.run import load_cases
    from rca.evaluation.suite import REALWORLD_DEV_FILES

    cases = []
    for path in [REPO / "tests" / "data" / "dev_cases.jsonl", *REALWORLD_DEV_FILES]:
        for case in load_cases(path):
            if path.name == "dev_cases.jsonl" or case.get("split") == "dev":
                cases.append({**case, "file": path.name})
    return cases


def _dump(corpus: str) -> list[dict[str, Any]]:
    """One row per case, retrieval embedded once, the gate opened."""
    from rca.corpus.embeddings import embed_queries
    from rca.evaluation.run import case_incident, load_bodies, load_index
    from rca.retrieval.hybrid import search
    from rca.retrieval.signals import build_signals
    from rca.suggestion.providers import step_ranking
    from rca.suggestion.providers.offline_weights import WEIGHTS

    opened = replace(WEIGHTS, max_score_gap=OPEN_GATE)
    step_ranking.WEIGHTS = opened  # type: ignore[attr-defined]  # the ranking's module global
    index, _ = load_index(corpus)
    bodies = load_bodies(corpus, index.slugs)
    cases = _all_cases()
    incidents = [case_incident(case) for case in cases]
    signals = [build_signals(incident) for incident in incidents]
    vectors = embed_queries([s.embedding_text() for s in signals])
    rows: list[dict[str, Any]] = []
    for case, incident, sig, vector in zip(cases, incidents, signals, vectors, strict=True):
        found = search(sig, vector, k=5, index=index)
        if found:
            rows.append(_row(case, incident, found, bodies))
    return rows


def _row(case: dict[str, Any], incident: Any, found: list[Any], bodies: dict[str, str]) -> Any:
    """One case's ranked candidate steps: parts, gaps, keyword in action; and the retrieval
    figures of the confidence (which the two weights do not move)."""
    from rca.evaluation.metrics import keyword_hit
    from rca.suggestion.confidence import strength
    from rca.suggestion.evidence import context_for, evidence_from_retrieved
    from rca.suggestion.providers import step_ranking

    keywords = case.get("keywords") or []
    ctx = context_for(incident, evidence_from_retrieved(found, bodies))
    runbooks = [item for item in ctx.evidence if item.kind == "runbook"]
    best = max(float(item.score) for item in runbooks)
    plain = [float(i.score) for i in runbooks if not step_ranking._advice_only(i)]
    top = max(plain) if plain else best
    figures = strength(ctx, [])
    return {
        "id": case["id"],
        "file": case["file"],
        "retrieval": figures.retrieval,
        "margin": figures.margin,
        "top_gap": best - top,  # the best non-advice runbook below an advice-only one
        "candidates": [
            {
                "runbook": c.evidence.slug,
                "position": c.position,
                "advice": c.advice,
                "gap": best - float(c.evidence.score),  # the runbook term's
                "gate_gap": top - float(c.evidence.score),  # the sibling gate's
                "parts": c.parts,
                "hit": keyword_hit(c.action, keywords),
            }
            for c in step_ranking.rank_steps(ctx)
        ],
    }


def _choose(row: dict[str, Any], gap: float, runbook: float) -> tuple[Any, float]:
    """The best candidate and its score under ``gap`` and ``runbook`` (the first of equal
    scores, as the ranking's stable sort keeps)."""
    best, best_score = None, float("-inf")
    for c in row["candidates"]:
        if c["advice"]:
            score = sum(c["parts"].values())
        elif row["top_gap"] > gap + 1e-12 or c["gate_gap"] > gap + 1e-12:
            continue
        else:
            score = sum(dict(c["parts"], runbook=runbook * (1.0 - c["gap"])).values())
        if score > best_score + 1e-12:
            best, best_score = c, score
    return best, best_score


def _tally(rows: list[dict[str, Any]], gap: float, runbook: float) -> dict[str, int]:
    """Fix term in the chosen action and right-runbook-wrong-step (whatever the confidence),
    and answered right / answered wrong / abstained with the current confidence map."""
    from rca.suggestion.confidence import NO_STEP, Strength, load_calibration
    from rca.suggestion.providers.offline_weights import WEIGHTS

    calibration = load_calibration()
    out = {"action": 0, "wrong_step": 0, "right": 0, "wrong": 0, "abstained": 0}
    for row in rows:
        chosen, score = _choose(row, gap, runbook)
        figures = Strength(row["retrieval"], row["margin"], score if chosen else NO_STEP, 0)
        confidence = calibration.probability(figures)
        if chosen is not None and chosen["advice"]:
            confidence = min(confidence, WEIGHTS.advice_confidence_cap)
        hit = bool(chosen and chosen["hit"])
        out["action"] += hit
        out["wrong_step"] += (
            bool(chosen)
            and not hit
            and any(c["hit"] for c in row["candidates"] if c["runbook"] == chosen["runbook"])
        )
        if chosen is None or confidence < calibration.threshold:
            out["abstained"] += 1
        else:
            out["right" if hit else "wrong"] += 1
    return out


def _line(rows: list[dict[str, Any]], choice: dict[str, tuple[float, float]]) -> str:
    total = {"action": 0, "wrong_step": 0, "right": 0, "wrong": 0, "abstained": 0}
    for row in rows:
        for key, value in _tally([row], *choice[row["id"]]).items():
            total[key] += value
    return (
        f"{len(rows)}: action {total['action']} (wrong step {total['wrong_step']}); answered "
        f"right {total['right']}, wrong {total['wrong']}, abstained {total['abstained']}"
    )


OBJECTIVES = {
    "action": lambda t: (t["action"], -t["wrong_step"]),
    "right-wrong": lambda t: (t["right"] - t["wrong"], t["action"]),
}
"""``--objective``: ``action`` (the default, as before); ``right-wrong`` (answered right
minus answered wrong with the current confidence map, then fix terms in the action): that
map is not refitted per setting, so it favours a low runbook weight, which only lowers
every step's score and so answers less."""


def _report(rows: list[dict[str, Any]], k: int, objective: str = "action") -> None:
    from rca.evaluation.crossval import fold_of
    from rca.suggestion.providers.offline_weights import WEIGHTS

    current = (WEIGHTS.max_score_gap, WEIGHTS.runbook)
    grid = [current, *(g for g in itertools.product(GAPS, RUNBOOK) if g != current)]
    base = _line(rows, dict.fromkeys(_ids(rows), current))
    print(f"objective {objective}; current {current}, in sample {base}")
    folds = fold_of(_ids(rows), k)
    chosen: dict[str, tuple[float, float]] = {}
    for fold in range(k):
        train = [r for r in rows if folds[r["id"]] != fold]
        scored = {g: _tally(train, *g) for g in grid}
        best = max(grid, key=lambda g: OBJECTIVES[objective](scored[g]))
        print(f"  fold {fold}: chose {best}, train {scored[best]}")
        chosen.update({r["id"]: best for r in rows if folds[r["id"]] == fold})
    print(f"out of fold {_line(rows, chosen)}")
    for name in sorted({r["file"] for r in rows}):
        subset = [r for r in rows if r["file"] == name]
        base = _line(subset, dict.fromkeys(_ids(subset), current))
        print(f"  {name} current {base}; out of fold {_line(subset, chosen)}")
    print("in sample, every setting:")
    for g in grid:
        print(f"  {g}: {_line(rows, dict.fromkeys(_ids(rows), g))}")


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "rca" / "runbooks"))
    parser.add_argument("--dump", help="write the rows here (JSON)")
    parser.add_argument("--rows", help="read the rows of an earlier --dump (no retrieval)")
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--objective", choices=sorted(OBJECTIVES), default="action")
    args = parser.parse_args()
    if args.rows:
        sys.path.insert(0, str(REPO))
        rows = json.loads(Path(args.rows).read_text(encoding="utf-8"))
    else:
        setup_django()
        rows = _dump(args.corpus)
        if args.dump:
            Path(args.dump).write_text(json.dumps(rows), encoding="utf-8")
    _report(rows, args.cv, args.objective)


if __name__ == "__main__":
    main()
