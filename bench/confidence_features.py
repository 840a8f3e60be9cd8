"""Compare confidence feature sets out of fold on the same rows (issue 16).

    .venv/bin/python bench/confidence_features.py --rows FILE [--sets agree;ident;...]
        [--seeds 0,1] [--history-weight 0] [--extra-weight 1]

``FILE`` is a ``bench/calibrate_confidence.py --dump`` (bundled, leave-class-out and, with
``--history ROOT``, history rows). Each set of ``--sets`` (``;`` between sets, ``,`` within)
is added to retrieval / margin / step and fitted by ``calibrate_confidence.py``'s own
procedure (L2 1, threshold chosen on dev, leave-class-out rows at weight 1; history and
independent rows at ``--history-weight`` / ``--extra-weight``), 5-fold at each seed and one
fold per case file; ``-`` is the three features alone. Printed per kind of row: answered
right / answered wrong / abstained right / abstained wrong (right - wrong), next to the
params file scored on the same rows, and each feature's AUC (P(a right row's figure >
a wrong row's)) per kind.
"""

from __future__ import annotations

import argparse
from typing import Any

from _env import setup_django
from calibrate_confidence import FEATURES, _fit, _folds
from confidence_rows import KINDS, figures, read_rows


def _counts(rows: list[dict[str, Any]], answered: list[bool]) -> tuple[int, int, int, int]:
    right = sum(a and r["hit"] for a, r in zip(answered, rows, strict=True))
    wrong = sum(answered) - right
    held_right = sum(not a and r["hit"] for a, r in zip(answered, rows, strict=True))
    return right, wrong, held_right, len(rows) - sum(answered) - held_right


def _out_of_fold(rows: list[dict[str, Any]], args: Any, features: list[str], k: int) -> list[bool]:
    """Whether each row is answered by the fit made without its fold (k = 0: by file)."""

    fold_of = _folds(rows, args, k, by_file=k == 0)
    answered = [False] * len(rows)
    for fold in sorted(set(fold_of.values())):
        train = [r for r in rows if fold_of[r["case"]] != fold]
        fit = _fit(train, args, features)
        for i, row in enumerate(rows):
            if fold_of[row["case"]] == fold:
                answered[i] = fit.probability(figures(row)) >= fit.threshold
    return answered


def _auc(values: list[float], labels: list[bool]) -> float:
    right = [v for v, y in zip(values, labels, strict=True) if y]
    wrong = [v for v, y in zip(values, labels, strict=True) if not y]
    if not right or not wrong:
        return float("nan")
    wins = sum((a > b) + 0.5 * (a == b) for a in right for b in wrong)
    return wins / (len(right) * len(wrong))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", required=True)
    parser.add_argument("--sets", default="-;agree;ident;grounded;agree,ident,grounded")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--history-weight", type=float, default=0.0)
    parser.add_argument("--extra-weight", type=float, default=1.0)
    args = parser.parse_args()
    # calibrate_confidence.py's default procedure
    args.l2, args.augment_weight, args.no_augment, args.monotone = 1.0, 1.0, False, False
    args.min_answered, args.threshold_rule = 0.3, "best"
    setup_django()
    from rca.suggestion.confidence import load_calibration

    rows = read_rows(args.rows)
    kinds = [kind for kind in KINDS if any(r["kind"] == kind for r in rows)]
    shipped = load_calibration()
    print("AUC of each figure for 'the action names the fix', per kind of row")
    for kind in kinds:
        sub = [r for r in rows if r["kind"] == kind]
        labels = [r["hit"] for r in sub]
        names = [*FEATURES, *sorted(set().union(*(r.get("features", {}) for r in sub)))]
        aucs = " ".join(
            f"{name} {_auc([figures(r).value(name) for r in sub], labels):.3f}" for name in names
        )
        p = [shipped.probability(figures(r)) for r in sub]
        shown = f"{kind} ({len(sub)}, {sum(labels)} right)"
        print(f"  {shown}: {aucs}; shipped P {_auc(p, labels):.3f}")
    answered = [shipped.probability(figures(r)) >= shipped.threshold for r in rows]
    schemes = [(f"5-fold seed {s}", 5, int(s)) for s in args.seeds.split(",")]
    schemes.append(("by file", 0, 0))
    table: list[tuple[str, str, list[bool]]] = [("shipped params", "", answered)]
    for spec in args.sets.split(";"):
        extra = [] if spec.strip() == "-" else [f for f in spec.split(",") if f]
        for title, k, seed in schemes:
            args.seed = seed
            flags = _out_of_fold(rows, args, [*FEATURES, *extra], k)
            table.append(("+".join(extra) or "3 features", title, flags))
    print("\nanswered right / wrong / abstained right / abstained wrong (right - wrong)")
    print("| set | folds | " + " | ".join(kinds) + " |")
    print("|---|---|" + "---|" * len(kinds))
    for name, folds, flags in table:
        cells = []
        for kind in kinds:
            idx = [i for i, r in enumerate(rows) if r["kind"] == kind]
            a, b, c, d = _counts([rows[i] for i in idx], [flags[i] for i in idx])
            cells.append(f"{a} / {b} / {c} / {d} (**{a - b}**)")
        print(f"| {name} | {folds} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
