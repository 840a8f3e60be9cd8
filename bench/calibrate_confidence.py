"""Refit the offline provider's confidence on the dev cases and print reliability tables.

    .venv/bin/python bench/calibrate_confidence.py [--write] [--holdout] [--corpus DIR] [--cv K]

Cases: ``tests/data/dev_cases.jsonl`` and the ``split == "dev"`` lines of
``eval/realworld/cases-*.jsonl``. Each case goes through retrieval as ``rca eval --suggest``
runs it (hybrid, default fusion, top 5) and the offline provider; its raw evidence figures
(:class:`rca.suggestion.confidence.Strength`) are recorded with the label "the action the
provider would give names one of the case's ``keywords``" (the README's fix-term-in-action
rule; for an abstention, its best guess is scored).

Dev cases all have runbooks written for their kind, while real incidents often do not
(the holdout's main failure). So each dev case is also run with its own category's runbooks
left out of the retrieved list (leave-class-out), simulating an incident no runbook covers;
these rows join the fit with weight ``--augment-weight``, and the abstention threshold is
chosen on all dev rows (:func:`rca.suggestion.calibration.choose_threshold`): half of them
then have no runbook of their kind, an assumption about real traffic, stated here. Nothing
here reads a holdout case unless ``--holdout`` is given, and then only to print its
reliability table and rates (score only: the fit and the threshold come from dev).

``--cv K`` also runs the whole procedure (fit and threshold) K times, each time on all dev
cases but one fold (a case and its leave-class-out row stay in the same fold), and scores
the left-out fold: per-fold thresholds, out-of-fold answered right / wrong / abstained and
the reliability of the out-of-fold probabilities, next to the parameters in the params
file (as they were before this run) scored on the same folds.

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

DEV_FILES = [
    "tests/data/dev_cases.jsonl",
    "eval/realworld/cases-a.jsonl",
    "eval/realworld/cases-b.jsonl",
    "eval/realworld/cases-d.jsonl",
    "eval/realworld/cases-e.jsonl",
    "eval/realworld/cases-g.jsonl",
]
HOLDOUT_FILES = ["eval/realworld/cases-a.jsonl", "eval/realworld/cases-b.jsonl"]
FEATURES = ("retrieval", "margin", "step")


def _cases(paths: list[str], split: str) -> list[dict[str, Any]]:
    cases = []
    for path in paths:
        for line in (REPO / path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case.get("split", "dev") == split:
                    cases.append(case)
    return cases


def _rows(cases: list[dict[str, Any]], corpus: str, augment: bool) -> list[dict[str, Any]]:
    """One row per case (and per left-out case): id, figures, label, abstained."""
    from rca.corpus.embeddings import embed
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
    vectors = embed([s.embedding_text() for s in signals])
    # Never abstain here: the label is about the action the provider would give.
    provider = OfflineProvider(Calibration(0.0, {}, {}, {}, 0.0))
    classes = set(index.classes)
    rows = []
    for case, incident, sig, vector in zip(cases, incidents, signals, vectors, strict=True):
        category = case.get("category", "")
        variants = [("", 0)]
        if augment and category in classes:
            variants.append(("-loco", sum(c == category for c in index.classes)))
        for suffix, left_out in variants:
            found = search(sig, vector, k=5 + left_out, index=index)
            if suffix:
                found = [r for r in found if r.failure_class != category][:5]
            if not found:
                continue
            ctx = context_for(incident, evidence_from_retrieved(found, bodies))
            draft = provider.suggest(ctx)
            rows.append(
                {
                    "id": case["id"] + suffix,
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


def _cross_validate(rows: list[dict[str, Any]], args: Any, features: list[str], k: int) -> None:
    """K-fold over dev cases: the procedure of ``main`` on K-1 folds, scored on the rest."""
    import numpy as np

    from rca.suggestion.calibration import choose_threshold, fit_logistic, reliability
    from rca.suggestion.confidence import Strength, load_calibration

    old = load_calibration()
    base = sorted({r["id"].removesuffix("-loco") for r in rows})
    order = np.random.RandomState(args.seed).permutation(len(base))
    fold_of = {base[j]: i % k for i, j in enumerate(order)}
    rows = [r for r in rows if not (args.no_augment and r["augmented"])]
    oof: dict[str, list[float]] = {"new": [], "new_t": [], "old": []}
    scored: list[dict[str, Any]] = []
    for fold in range(k):
        train = [r for r in rows if fold_of[r["id"].removesuffix("-loco")] != fold]
        test = [r for r in rows if fold_of[r["id"].removesuffix("-loco")] == fold]
        weights = [args.augment_weight if r["augmented"] else 1.0 for r in train]
        fit = fit_logistic(
            [Strength(**r["strength"]) for r in train],
            [r["hit"] for r in train],
            features,
            l2=args.l2,
            weights=weights,
        )
        threshold = choose_threshold(
            [fit.probability(Strength(**r["strength"])) for r in train],
            [r["hit"] for r in train],
            min_answered=args.min_answered,
        )
        p = [fit.probability(Strength(**r["strength"])) for r in test]
        p_old = [old.probability(Strength(**r["strength"])) for r in test]
        print(f"fold {fold}: {len(test)} rows, threshold {threshold:.3f}")
        print(f"  refit  {_tally(test, p, [threshold] * len(test))}")
        print(f"  old    {_tally(test, p_old, [old.threshold] * len(test))}")
        oof["new"] += p
        oof["new_t"] += [threshold] * len(test)
        oof["old"] += p_old
        scored += test
    for subset, keep in (
        ("all dev rows (the objective's population)", lambda r: True),
        ("dev cases as collected", lambda r: not r["augmented"]),
        ("leave-class-out rows", lambda r: r["augmented"]),
    ):
        idx = [i for i, r in enumerate(scored) if keep(r)]
        sub = [scored[i] for i in idx]
        print(f"out of fold, {subset}:")
        new_p, old_p = [oof["new"][i] for i in idx], [oof["old"][i] for i in idx]
        fold_t, old_t = [oof["new_t"][i] for i in idx], [old.threshold] * len(sub)
        labels = [r["hit"] for r in sub]
        print(f"  refit (per-fold threshold)  {_tally(sub, new_p, fold_t)}")
        print(f"  refit, threshold {old.threshold:.3f}     {_tally(sub, new_p, old_t)}")
        print(f"  old params ({old.threshold:.3f})       {_tally(sub, old_p, old_t)}")
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
    args = parser.parse_args()
    setup_django()

    from rca.suggestion.calibration import choose_threshold, fit_logistic
    from rca.suggestion.confidence import PARAMS_PATH, Strength

    if args.rows:
        rows = json.loads(Path(args.rows).read_text(encoding="utf-8"))
    else:
        rows = _rows(_cases(DEV_FILES, "dev"), args.corpus, augment=True)
    if args.dump:
        Path(args.dump).write_text(json.dumps(rows), encoding="utf-8")
    fit_rows = [r for r in rows if not (args.no_augment and r["augmented"])]
    features = [f for f in args.features.split(",") if f]
    if args.cv:
        _cross_validate(rows, args, features, args.cv)
    figures = [Strength(**r["strength"]) for r in fit_rows]
    labels = [r["hit"] for r in fit_rows]
    weights = [args.augment_weight if r["augmented"] else 1.0 for r in fit_rows]
    calibration = fit_logistic(figures, labels, features, l2=args.l2, weights=weights)
    plain = [r for r in rows if not r["augmented"]]
    threshold = choose_threshold(
        [calibration.probability(Strength(**r["strength"])) for r in fit_rows],
        labels,
        min_answered=args.min_answered,
    )
    meta = {
        "fitted_on": f"{len(plain)} dev cases + {len(fit_rows) - len(plain)} leave-class-out rows",
        "label": "a case keyword in the action (fix term in action)",
        "features": features,
        "l2": args.l2,
        "augment_weight": args.augment_weight,
        "threshold_rule": (
            f"max(right - wrong) among answered dev rows (with leave-class-out), "
            f">= {args.min_answered} answered"
        ),
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
