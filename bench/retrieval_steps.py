"""Choose the step ranking's retrieval weights out of fold, for a given fusion setting.

    SECRET_KEY=x .venv/bin/python bench/retrieval_steps.py --cosine-scale 1.0 --signal 0.3 \\
        --dump /tmp/steps-1.0.json --cv 5
    .venv/bin/python bench/retrieval_steps.py --rows /tmp/steps-1.0.json --cv 5

The step ranking reads retrieval twice (:mod:`rca.suggestion.providers.step_ranking`): which
runbooks below the top one lend steps (same failure class, fused score at most
``max_score_gap`` below the top's) and how much a step's runbook adds
(``runbook x (1 - gap)``). Both are in the fused score's units, so a fusion re-weighting can
move them: this bench re-chooses them on the training folds of the dev cases and scores the
held-out fold.

Dev cases only: the files of ``bench/step_choice.py`` (190) and cases-n/o/p, ``split ==
"dev"``, run through retrieval (hybrid, calibrated fusion with the given weights, top 5) and
the step ranking with every same-class runbook of the top 3 lending steps (the gate opened),
so the gate and the weight can be re-applied here without re-running retrieval. Folds: the
sorted ids dealt round-robin (:func:`rca.evaluation.crossval.fold_of`), as ``rca eval --cv``
splits. Objective on the training folds: fix terms in the action (a case keyword in the
chosen step's action), then fewest right-runbook-wrong-step, then the grid's first (the
current default). Printed per dev file: the current weights and out of fold.
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
from step_choice import _cases

OPEN_GATE = 1e9
GAPS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, OPEN_GATE)
RUNBOOK = (1.0, 1.5, 2.0, 3.0, 4.0)
LATER_FILES = [f"eval/realworld/cases-{x}.jsonl" for x in "nop"]


def _all_cases() -> list[dict[str, Any]]:
    return [*_cases(), *_cases(LATER_FILES)]


def _dump(corpus: str, settings: list[tuple[float, float]]) -> list[list[dict[str, Any]]]:
    """Rows per fusion setting (``cosine_scale``, ``signal``), cases embedded once."""
    from rca.corpus.embeddings import embed
    from rca.evaluation.run import case_incident, load_bodies, load_index
    from rca.retrieval.hybrid import search
    from rca.retrieval.signals import build_signals
    from rca.retrieval.weights import DEFAULT_WEIGHTS
    from rca.suggestion.providers import step_ranking

    step_ranking.WEIGHTS = replace(step_ranking.WEIGHTS, max_score_gap=OPEN_GATE)
    index, _ = load_index(corpus)
    bodies = load_bodies(corpus, index.slugs)
    cases = _all_cases()
    incidents = [case_incident(case) for case in cases]
    signals = [build_signals(incident) for incident in incidents]
    vectors = embed([s.embedding_text() for s in signals])
    dumps = []
    for cosine_scale, signal in settings:
        weights = replace(DEFAULT_WEIGHTS, cosine_scale=cosine_scale, signal=signal)
        rows: list[dict[str, Any]] = []
        for case, incident, sig, vector in zip(cases, incidents, signals, vectors, strict=True):
            found = search(sig, vector, k=5, index=index, weights=weights)
            if found:
                rows.append(_row(case, incident, found, bodies))
        dumps.append(rows)
    return dumps


def _row(case: dict[str, Any], incident: Any, found: list[Any], bodies: dict[str, str]) -> Any:
    """One case's ranked candidate steps: parts, gap to the top runbook, keyword in action."""
    from rca.evaluation.metrics import keyword_hit
    from rca.suggestion.evidence import context_for, evidence_from_retrieved
    from rca.suggestion.providers import step_ranking

    keywords = case.get("keywords") or []
    ctx = context_for(incident, evidence_from_retrieved(found, bodies))
    top = max(float(item.score) for item in ctx.evidence if item.kind == "runbook")
    return {
        "id": case["id"],
        "file": case["file"],
        "scores": [float(r.fused) for r in found],
        "candidates": [
            {
                "runbook": c.evidence.slug,
                "position": c.position,
                "gap": top - float(c.evidence.score),
                "parts": c.parts,
                "hit": keyword_hit(c.action, keywords),
            }
            for c in step_ranking.rank_steps(ctx)
        ],
    }


def _choose(row: dict[str, Any], gap: float, runbook: float) -> dict[str, Any] | None:
    """The best candidate under ``gap`` and ``runbook`` (the first of equal scores)."""
    best, best_score = None, float("-inf")
    for c in row["candidates"]:
        if c["gap"] > gap + 1e-12:
            continue
        parts = dict(c["parts"], runbook=runbook * (1.0 - c["gap"]))
        score = sum(parts.values())
        if score > best_score + 1e-12:
            best, best_score = c, score
    return best


def _tally(rows: list[dict[str, Any]], gap: float, runbook: float) -> tuple[int, int]:
    hits = wrong = 0
    for row in rows:
        chosen = _choose(row, gap, runbook)
        if chosen is None:
            continue
        hits += chosen["hit"]
        wrong += not chosen["hit"] and any(
            c["hit"] for c in row["candidates"] if c["runbook"] == chosen["runbook"]
        )
    return hits, wrong


def _by_file(rows: list[dict[str, Any]], choice: dict[str, tuple[float, float]]) -> str:
    files = sorted({r["file"] for r in rows})
    parts = []
    for name in ["all", *files]:
        subset = [r for r in rows if name in ("all", r["file"])]
        hits = sum(_tally([r], *choice[r["id"]])[0] for r in subset)
        wrong = sum(_tally([r], *choice[r["id"]])[1] for r in subset)
        parts.append(f"{name} {hits}/{len(subset)} (wrong step {wrong})")
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "rca" / "runbooks"))
    parser.add_argument(
        "--settings", default="1.0:0.3", help="fusion cosine_scale:signal, comma-separated"
    )
    parser.add_argument("--dump", help="write the rows here (JSON; {} = the setting)")
    parser.add_argument("--rows", help="read the rows of an earlier --dump (no retrieval)")
    parser.add_argument("--cv", type=int, default=5)
    args = parser.parse_args()
    if args.rows:
        sys.path.insert(0, str(REPO))
        _report(json.loads(Path(args.rows).read_text(encoding="utf-8")), args.cv)
        return
    setup_django()
    settings = [
        (float(a), float(b)) for a, b in (item.split(":") for item in args.settings.split(","))
    ]
    for (scale, signal), rows in zip(settings, _dump(args.corpus, settings), strict=True):
        if args.dump:
            Path(args.dump.format(f"{scale}-{signal}")).write_text(json.dumps(rows))
        print(f"fusion cosine_scale {scale}, signal {signal}:")
        _report(rows, args.cv)


def _report(rows: list[dict[str, Any]], k: int) -> None:
    from rca.evaluation.crossval import fold_of
    from rca.suggestion.providers.offline_weights import WEIGHTS

    current = (WEIGHTS.max_score_gap, WEIGHTS.runbook)
    print(f"current {current}: {_by_file(rows, {r['id']: current for r in rows})}")
    grid = [current, *itertools.product(GAPS, RUNBOOK)]
    base = [r for r in rows if not r["file"].startswith(tuple(f"cases-{x}" for x in "nop"))]
    for name, population in (("190 dev", base), ("190 dev + cases-n/o/p", rows)):
        folds = fold_of([r["id"] for r in population], k)
        chosen: dict[str, tuple[float, float]] = {}
        for fold in range(k):
            train = [r for r in population if folds[r["id"]] != fold]
            best = max(grid, key=lambda g, t=train: (*_tally(t, *g)[:1], -_tally(t, *g)[1]))
            print(f"  {name}, fold {fold}: chose {best}, train {_tally(train, *best)}")
            chosen.update({r["id"]: best for r in population if folds[r["id"]] == fold})
        print(f"{name}, out of fold: {_by_file(population, chosen)}")
    for g in grid[1:]:
        print(f"  fixed {g}: {_by_file(rows, {r['id']: g for r in rows})}")


if __name__ == "__main__":
    main()
