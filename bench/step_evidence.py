"""Weigh where an incident says a word, for the step overlap, out of fold on the dev cases.

    SECRET_KEY=x .venv/bin/python bench/step_choice.py --dump /tmp/steps.json
    .venv/bin/python bench/step_evidence.py --rows /tmp/steps.json --cv 5

The dump keeps, per case, each incident word's places (:func:`evidence_words`: message,
advice, log, context, own-code source line by depth, own function name, library frame, file
name/module) and, per candidate step, what each shared word adds per unit of evidence
weight. This re-scores the overlap part for a grid of source weights (the rest of the score
unchanged), chooses the weights on K-1 folds (most fix terms in the action, then fewest
right-runbook-wrong-step, then the grid's first) and prints per dev file before -> after,
out of fold. ``--check`` first re-computes the dumped overlap with the weights it was dumped
with (``--dumped``) to show the re-scoring is the ranking's.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from pathlib import Path
from typing import Any

from step_choice import _folds, _tally

OVERLAP, SCALE = 1.0, 2.0  # OfflineWeights.overlap, overlap_scale
#: The evidence weights of the ranking before issue 16's change: frames, logs and context
#: alike at 1.0, file names included.
BEFORE = {
    "message": 0.5, "advice": 0.25, "log": 1.0, "context": 1.0, "own_code": 1.0,
    "decay": 1.0, "own_name": 1.0, "library": 1.0, "path": 1.0,
}  # fmt: skip
GRID = {
    "message": [0.5, 1.0],
    "log": [0.5, 1.0],
    "own_code": [0.25, 0.5, 1.0],
    "decay": [0.5, 1.0],
    "own_name": [0.0, 0.25],
    "library": [0.0, 0.1, 0.25, 0.5],
}


def _weight(place: list[Any], w: dict[str, float]) -> float:
    source, depth = place
    if source == "own_code":
        return w["own_code"] * w["decay"] ** depth
    return w.get(source, 0.0)


def _overlap(row: dict[str, Any], candidate: dict[str, Any], w: dict[str, float]) -> float:
    places = row["places"]
    total = sum(
        share * max(_weight(p, w) for p in places[token])
        for token, share in candidate["terms"].items()
    )
    return OVERLAP * math.log1p(total / SCALE)


def _choose(row: dict[str, Any], w: dict[str, float]) -> dict[str, Any] | None:
    best, best_score = None, float("-inf")
    for candidate in row["candidates"]:
        parts = candidate["parts"]
        if "overlap" in parts:  # not the message's advice (its score is one flat part)
            score = sum(parts.values()) - parts["overlap"] + _overlap(row, candidate, w)
        else:
            score = sum(parts.values())
        score += candidate.get("preference", 0.0)  # the setting bet orders, as the ranking
        if score > best_score + 1e-12:
            best, best_score = candidate, score
    return best


def _score(rows: list[dict[str, Any]], w: dict[str, float]) -> tuple[int, int]:
    hits, wrong = _tally(rows, [_choose(r, w) for r in rows])
    return hits, -wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", required=True, help="a step_choice.py --dump")
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dumped", default="", help="source=weight,... the dump was made with")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    rows = [r for r in json.loads(Path(args.rows).read_text()) if not r["augmented"]]
    dumped = dict(BEFORE)
    dumped.update({k: float(v) for k, v in (p.split("=") for p in args.dumped.split(",") if p)})
    if args.check:
        worst = max(
            abs(_overlap(r, c, dumped) - c["parts"]["overlap"])
            for r in rows
            for c in r["candidates"]
            if "overlap" in c["parts"]
        )
        print(f"re-scored overlap vs dumped: largest difference {worst:.2e}")
    fixed = {**{k: v for k, v in BEFORE.items() if k not in GRID}, "path": 0.0}  # paths out
    grid = [
        {**fixed, **dict(zip(GRID, values, strict=True))}
        for values in itertools.product(*GRID.values())
    ]
    fold_of = _folds([r["id"] for r in rows], args.cv, args.seed)
    oof: dict[str, dict[str, Any] | None] = {}
    for fold in range(args.cv):
        train = [r for r in rows if fold_of[r["id"]] != fold]

        best = max(grid, key=lambda w, train=train: _score(train, w))
        shown = {k: best[k] for k in GRID}
        print(f"  fold {fold}: {shown} train (hits, -wrong step) {_score(train, best)}")
        oof.update({r["id"]: _choose(r, best) for r in rows if fold_of[r["id"]] == fold})
    every = max(grid, key=lambda w: _score(rows, w))
    shown = {k: every[k] for k in GRID}
    print(f"  chosen on all dev: {shown} (hits, -wrong step) {_score(rows, every)}")
    for name in [*sorted({r["file"] for r in rows}), "with frames", "all"]:
        sub = [r for r in rows if name in ("all", r["file"]) or (name[0] == "w" and r["frames"])]
        before = _tally(sub, [_choose(r, dumped) for r in sub])
        after = _tally(sub, [oof[r["id"]] for r in sub])
        print(
            f"  {name:<18} {len(sub):>4} cases: action hits {before[0]} -> {after[0]}, "
            f"wrong step {before[1]} -> {after[1]}"
        )


if __name__ == "__main__":
    main()
