"""Refit the offline provider's confidence on the dev cases and print reliability tables.

    .venv/bin/python bench/calibrate_confidence.py [--write] [--corpus DIR] [--cv K]
        [--cv-files] [--weights framework=0.5,...] [--rows FILE] [--dump FILE]
        [--extra-corpus DIR] [--extra-weight W] [--history ROOT] [--history-weight W]

Cases: the dev set of ``rca eval --realworld-dev``: ``tests/data/dev_cases.jsonl`` and the
``split == "dev"`` lines of :data:`rca.evaluation.suite.REALWORLD_DEV_FILES`. Each case goes
through retrieval as ``rca eval --suggest`` runs it (hybrid, default fusion, top 5) and the
offline provider; its raw evidence figures (:class:`rca.suggestion.confidence.Strength`) are
recorded with the label "the action the provider would give names one of the case's
``keywords``" (the README's fix-term-in-action rule; for an abstention, its best guess is
scored).

Dev cases all have runbooks written for their kind, while real incidents often do not
(the holdout's main failure). So each dev case is also run with its own category's runbooks
left out of the retrieved list (leave-class-out), simulating an incident no runbook covers;
these rows join the fit with weight ``--augment-weight``, and the abstention threshold is
chosen on all dev rows (:func:`rca.suggestion.calibration.choose_threshold`): half of them
then have no runbook of their kind, an assumption about real traffic, stated here. Nothing
here reads a holdout case unless ``--holdout`` is given (its file list predates the later
holdouts; not to be used while tuning), and then only to print its reliability table and
rates (score only: the fit and the threshold come from dev).

``--cv K`` also runs the whole procedure (fit and threshold) K times, each time on all dev
cases but one fold (a case and its leave-class-out row stay in the same fold), and scores
the left-out fold: per-fold thresholds, out-of-fold answered right / wrong / abstained and
the reliability of the out-of-fold probabilities, next to the parameters in the params
file (as they were before this run) scored on the same folds.

``--cv-files`` does the same with one fold per case file (leave-one-file-out): each
eval/realworld file was collected at its own time, some before their runbooks existed, the
closest proxy for fresh incidents the dev data has. ``--weights`` sets
:class:`rca.retrieval.weights.FusionWeights` fields for the retrieval the rows come from.
``--threshold-rule half`` answers when P >= 0.5 (right likelier than wrong: what maximises
right - wrong for a calibrated P, nothing fitted) instead of the threshold chosen on dev;
``--monotone`` drops any feature whose fitted weight is negative and refits (every figure is
"higher = stronger"). Measured 2026-12-05 (docs/MEASUREMENTS.md "Retrieval"): on 265 dev cases
L2 1-50 with either threshold rule are within 5 of right - wrong of each other out of fold
on the cases as collected, 5-fold and leave-one-file-out, so the defaults stay the
procedure that fitted the shipped parameters (L2 1, threshold chosen on dev).

``--extra-corpus DIR`` adds a third kind of row (bench/confidence_rows.py): each dev case
against ``DIR`` (``corpora/independent``: runbooks written without reading the bundled ones
or these cases), an incident a runbook of its kind covers without having been written for
it, which the bundled rows (in sample) and leave-class-out rows (no runbook) both miss. Its
rows (ids ``-ind``, in their case's fold) join the fit with weight ``--extra-weight``; 0
scores them without fitting on them. Every table is given per kind of row: bundled (what
the product serves), independent, leave-class-out. Measured 2026-12-07 on 527 dev cases
(docs/MEASUREMENTS.md): against the independent corpus the action names the fix in 86 of 527
(69 of the 283 cases whose class it has); fitting on those rows (weight 0.25-1) raises the
threshold and costs the bundled rows 25-45 of right - wrong out of fold, so they stay out.

``--history ROOT`` adds a fourth kind (``-hist``): each case of a file named by a folder
``ROOT/<case file name>/`` against that folder, the bundled runbooks as they were at the last
commit before the file's runbooks were written; weight ``--history-weight`` (0: scored only).

Rows also carry candidate figures the product does not read (``bench/answer_features.py``:
ranker agreement, the incident's identifiers in the runbook, the chosen step's words in the
incident); ``--features`` may name them, and ``bench/confidence_features.py`` compares sets of
them out of fold on one ``--dump``. Measured 2026-12-07 (docs/MEASUREMENTS.md): none raised
right - wrong on the bundled, leave-class-out and history rows at once; none is in the params.
Nor did ``documented`` (the chosen step fills a matched release-notes row or table pairing, or
a ``fits`` fact holds) on 545 dev cases that afternoon, nor a refit of the three on them.

``--write`` stores the fitted parameters in ``rca/suggestion/confidence_params.json``, the
one place the provider reads them from.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from _env import REPO, setup_django
from confidence_rows import (
    KINDS,
    build_rows,
    dev_cases,
    figures,
    fusion_weights,
    read_cases,
    read_rows,
)

HOLDOUT_FILES = ["eval/realworld/cases-a.jsonl", "eval/realworld/cases-b.jsonl"]
FEATURES = ("retrieval", "margin", "step")
KIND_TITLES = {
    "bundled": "bundled rows (dev cases as collected, what the product serves)",
    "independent": "independent rows (dev cases against --extra-corpus)",
    "history": "history rows (dev cases against the corpus before their runbooks)",
    "loco": "leave-class-out rows",
}


def _weight(row: dict[str, Any], args: Any) -> float:
    """The row's weight in the fit (0: scored, never fitted on)."""
    if row["kind"] == "loco":
        return 0.0 if args.no_augment else args.augment_weight
    if row["kind"] == "history":
        return args.history_weight
    return args.extra_weight if row["kind"] == "independent" else 1.0


def _report(title: str, rows: list[dict[str, Any]], calibration: Any) -> None:
    from rca.suggestion.calibration import reliability

    p = [calibration.probability(figures(r)) for r in rows]
    y = [r["hit"] for r in rows]
    print(reliability(p, y).format(title))
    answered = [
        (yi, r["hit_any"])
        for pi, yi, r in zip(p, y, rows, strict=True)
        if pi >= calibration.threshold
    ]
    n = len(rows)
    if not n:
        return
    print(
        f"  fix term in action: overall {sum(y) / n:.3f} ({sum(y)}/{n}); "
        f"answered {sum(a for a, _ in answered) / max(len(answered), 1):.3f} "
        f"({sum(a for a, _ in answered)}/{len(answered)}); "
        f"abstained {n - len(answered)}/{n} = {(n - len(answered)) / n:.3f}"
    )
    print(
        f"  as scored by rca eval (abstentions are misses): in action "
        f"{sum(a for a, _ in answered) / n:.3f}, in action or reason "
        f"{sum(b for _, b in answered) / n:.3f}"
    )


def _tally(rows: list[dict[str, Any]], p: list[float], thresholds: list[float]) -> str:
    """Answered right / wrong, abstained right / wrong (an abstention's best guess scored)."""
    answered = [pi >= t for pi, t in zip(p, thresholds, strict=True)]
    right = sum(a and r["hit"] for a, r in zip(answered, rows, strict=True))
    wrong = sum(answered) - right
    held_right = sum(not a and r["hit"] for a, r in zip(answered, rows, strict=True))
    held_wrong = len(rows) - sum(answered) - held_right
    return (
        f"{len(rows)} rows: answered right {right}, answered wrong {wrong}, "
        f"abstained right {held_right}, abstained wrong {held_wrong}, "
        f"right-wrong {right - wrong}, answered accuracy {right / max(sum(answered), 1):.3f}, "
        f"abstained {(len(rows) - sum(answered)) / max(len(rows), 1):.3f}"
    )


def _fit(rows: list[dict[str, Any]], args: Any, features: list[str]) -> Any:
    """The calibration (fit and threshold) of ``args``' procedure on ``rows`` (those of
    weight 0 left out)."""
    from dataclasses import replace

    from rca.suggestion.calibration import choose_threshold, fit_logistic

    rows = [r for r in rows if _weight(r, args) > 0]
    values = [figures(r) for r in rows]
    labels = [r["hit"] for r in rows]
    weights = [_weight(r, args) for r in rows]
    features = list(features)
    while True:
        fit = fit_logistic(values, labels, features, l2=args.l2, weights=weights)
        negative = [f for f in features if fit.coef[f] < 0]
        if not (args.monotone and negative and len(features) > 1):
            break
        features.remove(min(negative, key=lambda f: fit.coef[f]))
    if args.threshold_rule == "half":
        threshold = 0.5
    else:
        p = [fit.probability(f) for f in values]
        threshold = choose_threshold(p, labels, min_answered=args.min_answered)
    return replace(fit, threshold=threshold)


def _folds(rows: list[dict[str, Any]], args: Any, k: int, by_file: bool) -> dict[str, int]:
    """Fold of every case id (all rows of a case share one)."""
    import numpy as np

    if by_file:
        files = sorted({r["file"] for r in rows})
        return {r["case"]: files.index(r["file"]) for r in rows}
    base = sorted({r["case"] for r in rows})
    order = np.random.RandomState(args.seed).permutation(len(base))
    return {base[j]: i % k for i, j in enumerate(order)}


def _cross_validate(
    rows: list[dict[str, Any]], args: Any, features: list[str], k: int, by_file: bool = False
) -> None:
    """The procedure of ``main`` fitted without each fold (K random folds, or one fold per
    case file), scored on it; next to the params file's calibration on the same folds."""
    from rca.suggestion.calibration import reliability
    from rca.suggestion.confidence import load_calibration

    old = load_calibration()
    fold_of = _folds(rows, args, k, by_file)
    oof: dict[str, list[float]] = {"new": [], "new_t": [], "old": []}
    scored: list[dict[str, Any]] = []
    title = "leave-one-file-out" if by_file else f"{k}-fold"
    print(f"== {title} cross-validation")
    for fold in sorted(set(fold_of.values())):
        train = [r for r in rows if fold_of[r["case"]] != fold]
        test = [r for r in rows if fold_of[r["case"]] == fold]
        if not test:
            continue
        fit = _fit(train, args, features)
        p = [fit.probability(figures(r)) for r in test]
        p_old = [old.probability(figures(r)) for r in test]
        idx = [i for i, r in enumerate(test) if r["kind"] == "bundled"]
        plain = [test[i] for i in idx]
        name = test[0]["file"] if by_file else str(fold)
        coef = " ".join(f"{f} {w:+.2f}" for f, w in fit.coef.items())
        print(f"fold {name}: {len(plain)} cases, threshold {fit.threshold:.3f}, {coef}")
        sub_p, sub_old = [p[i] for i in idx], [p_old[i] for i in idx]
        print(f"  refit  {_tally(plain, sub_p, [fit.threshold] * len(plain))}")
        print(f"  old    {_tally(plain, sub_old, [old.threshold] * len(plain))}")
        oof["new"] += p
        oof["new_t"] += [fit.threshold] * len(test)
        oof["old"] += p_old
        scored += test
    subsets = [("every row", lambda r: True), ("the fit's rows", lambda r: _weight(r, args) > 0)]
    subsets += [(KIND_TITLES[kind], lambda r, kind=kind: r["kind"] == kind) for kind in KINDS]
    for subset, keep in subsets:
        idx = [i for i, r in enumerate(scored) if keep(r)]
        sub = [scored[i] for i in idx]
        if not sub:
            continue
        print(f"{title} out of fold, {subset}:")
        new_p, old_p = [oof["new"][i] for i in idx], [oof["old"][i] for i in idx]
        fold_t, old_t = [oof["new_t"][i] for i in idx], [old.threshold] * len(sub)
        labels = [r["hit"] for r in sub]
        print(f"  refit (per-fold threshold)  {_tally(sub, new_p, fold_t)}")
        print(f"  refit, threshold {old.threshold:.3f}     {_tally(sub, new_p, old_t)}")
        print(f"  old params ({old.threshold:.3f})       {_tally(sub, old_p, old_t)}")
        if args.verbose:
            print(reliability(new_p, labels).format("  reliability, refit out of fold"))
            print(reliability(old_p, labels).format("  reliability, old params"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "rca" / "runbooks"))
    parser.add_argument("--extra-corpus", help="independent rows from this corpus too")
    parser.add_argument("--extra-weight", type=float, default=1.0, help="0: score, never fit")
    parser.add_argument("--history", help="ROOT/<case file>/: that file's older corpus")
    parser.add_argument("--history-weight", type=float, default=1.0, help="0: score only")
    parser.add_argument("--features", default=",".join(FEATURES))
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--augment-weight", type=float, default=1.0)
    parser.add_argument("--no-augment", action="store_true")
    parser.add_argument("--min-answered", type=float, default=0.3)
    parser.add_argument("--rows", help="reuse the rows of an earlier --dump (no retrieval)")
    parser.add_argument("--dump", help="write the dev rows here (JSON)")
    parser.add_argument("--write", action="store_true", help="store the fit in the params file")
    parser.add_argument("--holdout", action="store_true", help="score the holdout (never fit)")
    parser.add_argument("--cv", type=int, default=0, help="K-fold cross-validation over dev cases")
    parser.add_argument("--seed", type=int, default=0, help="fold assignment seed for --cv")
    parser.add_argument("--cv-files", action="store_true", help="leave-one-file-out too")
    parser.add_argument("--weights", default="", help="FusionWeights fields, name=value,...")
    parser.add_argument("--threshold-rule", choices=("best", "half"), default="best")
    parser.add_argument("--monotone", action="store_true", help="drop negative-weight features")
    parser.add_argument("--verbose", action="store_true", help="out-of-fold reliability tables")
    args = parser.parse_args()
    setup_django()

    from rca.suggestion.confidence import PARAMS_PATH

    weights = fusion_weights(args.weights) if args.weights else None
    if args.rows:
        rows = read_rows(args.rows)
    else:
        history = (
            {p.name: str(p) for p in sorted(Path(args.history).iterdir()) if p.is_dir()}
            if args.history
            else None
        )
        rows = build_rows(
            dev_cases(),
            args.corpus,
            augment=True,
            extra_corpus=args.extra_corpus,
            weights=weights,
            history=history,
        )
    if args.dump:
        Path(args.dump).write_text(json.dumps(rows), encoding="utf-8")
    features = [f for f in args.features.split(",") if f]
    if args.cv:
        _cross_validate(rows, args, features, args.cv)
    if args.cv_files:
        _cross_validate(rows, args, features, 0, by_file=True)
    calibration = _fit(rows, args, features)
    fit_rows = [r for r in rows if _weight(r, args) > 0]
    count = {kind: sum(r["kind"] == kind for r in fit_rows) for kind in KINDS}
    fitted_on = f"{count['bundled']} dev cases + {count['loco']} leave-class-out rows"
    if count["history"]:
        fitted_on += f" + {count['history']} rows against the corpus before their runbooks"
    if count["independent"]:
        extra = Path(args.extra_corpus or "the extra corpus").name
        fitted_on += f" + {count['independent']} rows against corpora/{extra}"
    threshold_rule = (
        "0.5: answer when right is likelier than wrong (not fitted)"
        if args.threshold_rule == "half"
        else (
            f"max(right - wrong) among answered dev rows (with leave-class-out"
            f"{' and independent' if count['independent'] else ''}), "
            f">= {args.min_answered} answered"
        )
    )
    meta = {
        "fitted_on": fitted_on,
        "label": "a case keyword in the action (fix term in action)",
        "features": list(calibration.coef),
        "l2": args.l2,
        "augment_weight": args.augment_weight,
        "threshold_rule": threshold_rule,
        "refit": "bench/calibrate_confidence.py --write",
    }
    if count["independent"]:
        meta["extra_weight"] = args.extra_weight
    if count["history"]:
        meta["history_weight"] = args.history_weight
    calibration = type(calibration)(
        calibration.intercept,
        calibration.coef,
        calibration.mean,
        calibration.scale,
        calibration.threshold,
        meta,
    )
    print(json.dumps(calibration.as_dict(), indent=1))
    _report("dev, every fit row (threshold chosen here)", fit_rows, calibration)
    for kind in KINDS:
        kind_rows = [r for r in rows if r["kind"] == kind]
        if kind_rows:
            _report(f"dev, {KIND_TITLES[kind]}", kind_rows, calibration)
    if args.write:
        PARAMS_PATH.write_text(json.dumps(calibration.as_dict(), indent=2) + "\n", encoding="utf-8")
        print(f"written {PARAMS_PATH.relative_to(REPO)}")
    if args.holdout:
        held = build_rows(read_cases(HOLDOUT_FILES, "holdout"), args.corpus, augment=False)
        _report("holdout (scored only)", held, calibration)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
