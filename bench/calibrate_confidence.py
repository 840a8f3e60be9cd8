"""Refit the offline provider's confidence on the dev cases and print reliability tables.

    .venv/bin/python bench/calibrate_confidence.py [--write] [--corpus DIR] [--cv K]
        [--cv-files] [--weights framework=0.5,...] [--rows FILE] [--dump FILE]

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

HOLDOUT_FILES = ["eval/realworld/cases-a.jsonl", "eval/realworld/cases-b.jsonl"]
FEATURES = ("retrieval", "margin", "step")


def _cases(paths: list[str], split: str) -> list[dict[str, Any]]:
    cases = []
    for path in paths:
        for line in (REPO / path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case.get("split", "dev") == split:
                    cases.append({**case, "_file": Path(path).name})
    return cases


def dev_cases() -> list[dict[str, Any]]:
    """The cases of ``rca eval --realworld-dev`` (every line of tests/data/dev_cases.jsonl,
    the dev lines of the real-world dev files), each with the name of its file."""
    from rca.evaluation.run import load_cases
    from rca.evaluation.suite import REALWORLD_DEV_FILES, realworld_dev_cases

    cases = [
        {**case, "_file": "dev_cases.jsonl"}
        for case in load_cases(REPO / "tests" / "data" / "dev_cases.jsonl")
    ]
    real = _cases([str(p) for p in REALWORLD_DEV_FILES if p.is_file()], "dev")
    assert [c["id"] for c in real] == [c["id"] for c in realworld_dev_cases()]
    return cases + real


def _weights(spec: str) -> Any:
    """``framework=0.5,exception_type=0.25`` over the defaults."""
    from dataclasses import replace

    from rca.retrieval.weights import DEFAULT_WEIGHTS

    values: dict[str, float] = {}
    for item in filter(None, spec.split(",")):
        name, value = item.split("=", 1)
        values[name] = float(value)
    return replace(DEFAULT_WEIGHTS, **values)


def _rows(
    cases: list[dict[str, Any]], corpus: str, augment: bool, weights: Any = None
) -> list[dict[str, Any]]:
    """One row per case (and per left-out case): id, file, figures, label."""
    from rca.corpus.embeddings import embed_queries
    from rca.evaluation.metrics import keyword_hit
    from rca.evaluation.run import case_incident, load_bodies, load_index
    from rca.retrieval.hybrid import search
    from rca.retrieval.signals import build_signals
    from rca.suggestion.confidence import Calibration
    from rca.suggestion.evidence import context_for, evidence_from_retrieved
    from rca.suggestion.providers import OfflineProvider

    index, _ = load_index(corpus)
    bodies = load_bodies(corpus, index.slugs)
    incidents = [case_incident(case) for case in cases]
    signals = [build_signals(incident) for incident in incidents]
    vectors = embed_queries([s.embedding_text() for s in signals])
    # Never abstain here: the label is about the action the provider would give.
    provider = OfflineProvider(Calibration(0.0, {}, {}, {}, 0.0))
    classes = set(index.classes)
    extra = {"weights": weights} if weights is not None else {}
    rows = []
    for case, incident, sig, vector in zip(cases, incidents, signals, vectors, strict=True):
        category = case.get("category", "")
        variants = [("", 0)]
        if augment and category in classes:
            variants.append(("-loco", sum(c == category for c in index.classes)))
        for suffix, left_out in variants:
            found = search(sig, vector, k=5 + left_out, index=index, **extra)
            if suffix:
                found = [r for r in found if r.failure_class != category][:5]
            if not found:
                continue
            ctx = context_for(incident, evidence_from_retrieved(found, bodies))
            draft = provider.suggest(ctx)
            rows.append(
                {
                    "id": case["id"] + suffix,
                    "file": case.get("_file", ""),
                    "augmented": bool(suffix),
                    "strength": draft.strength,
                    "hit": keyword_hit(draft.action, case.get("keywords") or []),
                    "hit_any": keyword_hit(
                        f"{draft.action} {draft.reason}", case.get("keywords") or []
                    ),
                }
            )
    return rows


def _report(title: str, rows: list[dict[str, Any]], calibration: Any) -> None:
    from rca.suggestion.calibration import reliability
    from rca.suggestion.confidence import Strength

    p = [calibration.probability(Strength(**r["strength"])) for r in rows]
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
    answered = [r["hit"] for r, pi, t in zip(rows, p, thresholds, strict=True) if pi >= t]
    right, n = sum(answered), len(rows)
    wrong = len(answered) - right
    return (
        f"{n} rows: answered {len(answered)}, right {right}, wrong {wrong}, "
        f"right-wrong {right - wrong}, answered accuracy {right / max(len(answered), 1):.3f}, "
        f"abstained {(n - len(answered)) / max(n, 1):.3f}"
    )


def _fit(rows: list[dict[str, Any]], args: Any, features: list[str]) -> Any:
    """The calibration (fit and threshold) of ``args``' procedure on ``rows``."""
    from dataclasses import replace

    from rca.suggestion.calibration import choose_threshold, fit_logistic
    from rca.suggestion.confidence import Strength

    figures = [Strength(**r["strength"]) for r in rows]
    labels = [r["hit"] for r in rows]
    weights = [args.augment_weight if r["augmented"] else 1.0 for r in rows]
    features = list(features)
    while True:
        fit = fit_logistic(figures, labels, features, l2=args.l2, weights=weights)
        negative = [f for f in features if fit.coef[f] < 0]
        if not (args.monotone and negative and len(features) > 1):
            break
        features.remove(min(negative, key=lambda f: fit.coef[f]))
    if args.threshold_rule == "half":
        threshold = 0.5
    else:
        p = [fit.probability(f) for f in figures]
        threshold = choose_threshold(p, labels, min_answered=args.min_answered)
    return replace(fit, threshold=threshold)


def _folds(rows: list[dict[str, Any]], args: Any, k: int, by_file: bool) -> dict[str, int]:
    """Fold of every case id (a case and its leave-class-out row share one)."""
    import numpy as np

    if by_file:
        files = sorted({r["file"] for r in rows})
        return {r["id"].removesuffix("-loco"): files.index(r["file"]) for r in rows}
    base = sorted({r["id"].removesuffix("-loco") for r in rows})
    order = np.random.RandomState(args.seed).permutation(len(base))
    return {base[j]: i % k for i, j in enumerate(order)}


def _cross_validate(
    rows: list[dict[str, Any]], args: Any, features: list[str], k: int, by_file: bool = False
) -> None:
    """The procedure of ``main`` fitted without each fold (K random folds, or one fold per
    case file), scored on it; next to the params file's calibration on the same folds."""
    from rca.suggestion.calibration import reliability
    from rca.suggestion.confidence import Strength, load_calibration

    old = load_calibration()
    fold_of = _folds(rows, args, k, by_file)
    rows = [r for r in rows if not (args.no_augment and r["augmented"])]
    oof: dict[str, list[float]] = {"new": [], "new_t": [], "old": []}
    scored: list[dict[str, Any]] = []
    title = "leave-one-file-out" if by_file else f"{k}-fold"
    print(f"== {title} cross-validation")
    for fold in sorted(set(fold_of.values())):
        train = [r for r in rows if fold_of[r["id"].removesuffix("-loco")] != fold]
        test = [r for r in rows if fold_of[r["id"].removesuffix("-loco")] == fold]
        if not test:
            continue
        fit = _fit(train, args, features)
        p = [fit.probability(Strength(**r["strength"])) for r in test]
        p_old = [old.probability(Strength(**r["strength"])) for r in test]
        plain = [r for r in test if not r["augmented"]]
        name = test[0]["file"] if by_file else str(fold)
        coef = " ".join(f"{f} {w:+.2f}" for f, w in fit.coef.items())
        print(f"fold {name}: {len(plain)} cases, threshold {fit.threshold:.3f}, {coef}")
        idx = [i for i, r in enumerate(test) if not r["augmented"]]
        sub_p, sub_old = [p[i] for i in idx], [p_old[i] for i in idx]
        print(f"  refit  {_tally(plain, sub_p, [fit.threshold] * len(plain))}")
        print(f"  old    {_tally(plain, sub_old, [old.threshold] * len(plain))}")
        oof["new"] += p
        oof["new_t"] += [fit.threshold] * len(test)
        oof["old"] += p_old
        scored += test
    for subset, keep in (
        ("all dev rows (the objective's population)", lambda r: True),
        ("dev cases as collected", lambda r: not r["augmented"]),
        ("leave-class-out rows", lambda r: r["augmented"]),
    ):
        idx = [i for i, r in enumerate(scored) if keep(r)]
        sub = [scored[i] for i in idx]
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

    weights = _weights(args.weights) if args.weights else None
    if args.rows:
        rows = json.loads(Path(args.rows).read_text(encoding="utf-8"))
    else:
        rows = _rows(dev_cases(), args.corpus, augment=True, weights=weights)
    if args.dump:
        Path(args.dump).write_text(json.dumps(rows), encoding="utf-8")
    fit_rows = [r for r in rows if not (args.no_augment and r["augmented"])]
    features = [f for f in args.features.split(",") if f]
    if args.cv:
        _cross_validate(rows, args, features, args.cv)
    if args.cv_files:
        _cross_validate(rows, args, features, 0, by_file=True)
    calibration = _fit(fit_rows, args, features)
    threshold = calibration.threshold
    features = list(calibration.coef)
    plain = [r for r in rows if not r["augmented"]]
    threshold_rule = (
        "0.5: answer when right is likelier than wrong (not fitted)"
        if args.threshold_rule == "half"
        else (
            f"max(right - wrong) among answered dev rows (with leave-class-out), "
            f">= {args.min_answered} answered"
        )
    )
    meta = {
        "fitted_on": f"{len(plain)} dev cases + {len(fit_rows) - len(plain)} leave-class-out rows",
        "label": "a case keyword in the action (fix term in action)",
        "features": features,
        "l2": args.l2,
        "augment_weight": args.augment_weight,
        "threshold_rule": threshold_rule,
        "refit": "bench/calibrate_confidence.py --write",
    }
    calibration = type(calibration)(
        calibration.intercept,
        calibration.coef,
        calibration.mean,
        calibration.scale,
        threshold,
        meta,
    )
    print(json.dumps(calibration.as_dict(), indent=1))
    _report("dev, every fit row (threshold chosen here)", fit_rows, calibration)
    _report("dev (as collected)", plain, calibration)
    _report("dev, leave-class-out rows", [r for r in rows if r["augmented"]], calibration)
    if args.write:
        PARAMS_PATH.write_text(json.dumps(calibration.as_dict(), indent=2) + "\n", encoding="utf-8")
        print(f"written {PARAMS_PATH.relative_to(REPO)}")
    if args.holdout:
        held = _rows(_cases(HOLDOUT_FILES, "holdout"), args.corpus, augment=False)
        _report("holdout (scored only)", held, calibration)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
