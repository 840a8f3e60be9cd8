"""Right runbook, wrong step: measure it on the dev cases and try evidence features, out of fold.

    SECRET_KEY=x .venv/bin/python bench/step_choice.py --dump /tmp/steps.json
    .venv/bin/python bench/step_choice.py --rows /tmp/steps.json --cv 5 --signals name_w
    .venv/bin/python bench/step_choice.py --rows /tmp/steps.json --confidence step_margin

Dev cases only (the 265 of ``bench/calibrate_confidence.py``: ``tests/data/dev_cases.jsonl``
and the ``split == "dev"`` lines of ``rca eval --realworld-dev``'s files), run through
retrieval and the offline provider as ``rca eval --suggest`` runs them (hybrid, default
fusion, top 5), each also with its own category's runbooks left out
(leave-class-out, as the confidence fit does). Per case the dump keeps the answer, whether a
keyword (the fix term) is in the action and in the runner-up clause, and every ranked
candidate step with its score parts (:attr:`Candidate.parts`), whether its own action holds
a keyword, and its *support* signals: how much of the step's own text the incident names;
and, for ``bench/step_evidence.py``, each incident word's places and each step's shared
words; for ``bench/step_phrases.py``, the message, its error logs and each step's text.
Candidates are chosen by score plus ``preference`` (the setting bet), as the ranking orders.

Support signals (structural, no word lists), over the step's backticked code in its action
(all framework wordings): ``code_hits`` distinct code words (3+ letters, not a framework name
or stopword) the incident says; ``name_hits`` the same for identifier-like names only
(snake_case, camelCase, with a digit, hyphenated flags); ``name_w`` those weighted by where
the incident says them (:class:`IncidentView.words`); ``unmatched`` the step's names the
incident does not say (specificity without support). And from its ``Applies:`` line:
``api_match`` (its API frameworks are the incident's, positively, not just uncontradicted),
``fits_any`` (a ``fits`` fact holds).

``--cv K``: K-fold over dev cases; each fold picks the weight of each ``--signals`` signal
(added to the unchanged score) from ``--values`` on the other folds (most action hits, then
fewest wrong steps, then the smallest weight), and is scored with it. Printed per dev file:
fix term in action and right-runbook-wrong-step, before -> after (out of fold).

``--confidence F1,F2``: the procedure of ``calibrate_confidence.py --cv`` (logistic fit and
abstention threshold on K-1 folds, leave-class-out rows included) with the four
:class:`Strength` figures plus these, for three fold seeds: out-of-fold answered right,
wrong, right - wrong and AUC, against the four figures alone. Extra figures: ``step_margin``
(chosen step's score minus the next candidate's, capped at 2), ``rb_margin`` (minus the best
candidate of another runbook, capped at 3), ``same_runbook`` (candidates from the chosen
runbook), ``frames`` (the incident has stack frames) and the chosen step's support signals.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

from _env import REPO, setup_django

ALTERNATIVE = " If that does not apply: "
STRENGTH = ["retrieval", "margin", "step"]


def _dev_files() -> list[str]:
    """The files of ``rca eval --realworld-dev`` plus ``tests/data/dev_cases.jsonl`` (the 265
    dev cases of ``calibrate_confidence.py``; 235 before ``cases-aa``)."""
    from rca.evaluation.suite import REALWORLD_DEV_FILES

    real = [str(p.relative_to(REPO)) for p in REALWORLD_DEV_FILES if p.is_file()]
    return ["tests/data/dev_cases.jsonl", *real]


def _cases(paths: list[str] | None = None) -> list[dict[str, Any]]:
    """The dev lines of ``paths`` (default: :func:`_dev_files`), each tagged with its file."""
    cases = []
    for path in paths if paths is not None else _dev_files():
        for line in (REPO / path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case.get("split", "dev") == "dev":
                    case["file"] = Path(path).name
                    cases.append(case)
    return cases


def _support(candidate: Any, incident: Any, premises: Any) -> dict[str, float]:
    """The support signals of one candidate step (see the module docstring)."""
    from ingest.linear_regex import compile as linear
    from rca.retrieval.tokens import STOPWORDS
    from rca.suggestion.providers.incident_view import whole_words
    from rca.suggestion.providers.step_ranking import _FRAMEWORK_NAMES
    from rca.suggestion.providers.wording import split_step
    from rca.suggestion.step_values import step_wordings

    code, name = linear(r"`([^`]+)`"), linear(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*")
    words: set[str] = set()
    names: set[str] = set()
    for _, text in step_wordings(candidate.evidence.remediation[candidate.position]):
        for span in code.findall(split_step(text)[0]):
            words |= {w for w in whole_words(span) if len(w) >= 3 and w not in STOPWORDS}
            names |= {
                n.lower()
                for n in name.findall(span)
                if len(n) >= 3
                and (
                    "_" in n.strip("_")
                    or "-" in n
                    or any(c.isdigit() for c in n)
                    or any(c.isupper() for c in n[1:])
                )
            }
    words -= _FRAMEWORK_NAMES
    names -= _FRAMEWORK_NAMES
    said = {n for n in names if n in incident.whole}
    meta = candidate.applies
    return {
        "code_hits": float(len(words & incident.whole)),
        "name_hits": float(len(said)),
        "name_w": sum(incident.words.get(n, WEIGHT_UNSEEN) for n in said),
        "unmatched": float(len(names - said)),
        "api_match": float(bool((set(meta.api) | set(meta.variants)) & premises.frameworks)),
        "fits_any": float(bool(set(meta.fits) & incident.facts)),
    }


WEIGHT_UNSEEN = 0.5  # a name in the incident's whole words but not its weighted terms


def _terms(candidate: Any, places: dict[str, Any], rarity: Any) -> dict[str, float]:
    """What each of the step's words the incident says adds to its overlap per unit of the
    word's evidence weight (``bench/step_evidence.py`` re-weighs the evidence)."""
    from rca.suggestion.providers.offline_weights import WEIGHTS

    own = candidate.step_action_tokens
    reason = candidate.step_reason_tokens - own
    share = {t: rarity(t) for t in own if t in places}
    share.update({t: WEIGHTS.reason_share * rarity(t) for t in reason if t in places})
    return share


def _dump(corpus: str) -> list[dict[str, Any]]:
    from rca.corpus.embeddings import embed
    from rca.evaluation.metrics import keyword_hit
    from rca.evaluation.run import case_incident, load_bodies, load_index
    from rca.retrieval.hybrid import search
    from rca.retrieval.signals import build_signals
    from rca.suggestion.confidence import Calibration
    from rca.suggestion.evidence import context_for, evidence_from_retrieved
    from rca.suggestion.message_advice import error_log_texts
    from rca.suggestion.premises import read_premises
    from rca.suggestion.providers import OfflineProvider
    from rca.suggestion.providers.incident_view import evidence_words, read_incident
    from rca.suggestion.providers.step_ranking import _rarity, rank_steps

    index, _ = load_index(corpus)
    bodies = load_bodies(corpus, index.slugs)
    cases = _cases()
    incidents = [case_incident(case) for case in cases]
    signals = [build_signals(incident) for incident in incidents]
    vectors = embed([s.embedding_text() for s in signals])
    provider = OfflineProvider(Calibration(0.0, {}, {}, {}, 0.0))  # never abstains
    classes = set(index.classes)
    rows = []
    for case, incident, sig, vector in zip(cases, incidents, signals, vectors, strict=True):
        keywords = case.get("keywords") or []
        category = case.get("category", "")
        variants = [("", 0)]
        if category in classes:
            variants.append(("-loco", sum(c == category for c in index.classes)))
        for suffix, left_out in variants:
            found = search(sig, vector, k=5 + left_out, index=index)
            if suffix:
                found = [r for r in found if r.failure_class != category][:5]
            if not found:
                continue
            ctx = context_for(incident, evidence_from_retrieved(found, bodies))
            draft = provider.suggest(ctx)
            ranked = rank_steps(ctx)
            view, premises = read_incident(ctx), read_premises(ctx)
            places, rarity = evidence_words(ctx), _rarity(ctx)
            runner = draft.reason.split(ALTERNATIVE, 1)[1] if ALTERNATIVE in draft.reason else ""
            rows.append(
                {
                    "id": case["id"] + suffix,
                    "file": case["file"],
                    "augmented": bool(suffix),
                    "strength": draft.strength,
                    "frames": len(ctx.frames),
                    "hit": keyword_hit(draft.action, keywords),
                    "hit_runner_up": keyword_hit(runner, keywords),
                    "places": places,
                    "message": ctx.message or "",
                    "error_logs": error_log_texts(ctx.logs),
                    "whole": sorted(view.whole),
                    "candidates": [
                        {
                            "runbook": c.evidence.slug,
                            "position": c.position,
                            "parts": c.parts,
                            "preference": c.preference,
                            "text": c.evidence.remediation[c.position],
                            "action": c.action,
                            "signals": _support(c, view, premises),
                            "hit": keyword_hit(c.action, keywords),
                            "terms": _terms(c, places, rarity),
                        }
                        for c in ranked
                    ],
                }
            )
    return rows


def _choose(candidates: list[dict[str, Any]], weights: dict[str, float]) -> dict[str, Any] | None:
    """The best candidate when each support signal adds ``weight * value`` to the score and
    its ``preference`` (the setting bet) is added, as the ranking orders (the first of equal
    scores, as its stable sort keeps)."""
    best, best_score = None, float("-inf")
    for candidate in candidates:
        score = sum(candidate["parts"].values()) + candidate.get("preference", 0.0)
        score += sum(weights.get(k, 0.0) * v for k, v in candidate["signals"].items())
        if score > best_score + 1e-12:
            best, best_score = candidate, score
    return best


def _wrong_step(row: dict[str, Any], chosen: dict[str, Any] | None) -> bool:
    """Right runbook, wrong step: the action misses, another step of its runbook hits."""
    if chosen is None or chosen["hit"]:
        return False
    return any(c["hit"] for c in row["candidates"] if c["runbook"] == chosen["runbook"])


def _tally(rows: list[dict[str, Any]], choices: list[dict[str, Any] | None]) -> tuple[int, int]:
    hits = sum(bool(c and c["hit"]) for c in choices)
    return hits, sum(_wrong_step(r, c) for r, c in zip(rows, choices, strict=True))


def _measure(plain: list[dict[str, Any]]) -> None:
    chosen = [_choose(r["candidates"], {}) for r in plain]
    hits, wrong = _tally(plain, chosen)
    wrong_rows = [(r, c) for r, c in zip(plain, chosen, strict=True) if _wrong_step(r, c)]
    runner = sum(r["hit_runner_up"] for r, _ in wrong_rows)
    named = 0
    for r, c in wrong_rows:
        assert c is not None
        right = [x for x in r["candidates"] if x["runbook"] == c["runbook"] and x["hit"]]
        named += any(
            x["signals"][k] > c["signals"][k] for x in right for k in ("code_hits", "name_hits")
        )
    print(
        f"dev cases {len(plain)}: fix term in action {hits}; right runbook, wrong step {wrong} "
        f"(the fix in the runner-up clause: {runner}; a right step names more of the "
        f"incident than the chosen one: {named})"
    )


def _folds(ids: list[str], k: int, seed: int) -> dict[str, int]:
    import numpy as np

    order = np.random.RandomState(seed).permutation(len(ids))
    return {ids[j]: i % k for i, j in enumerate(order)}


def _cross_validate(
    plain: list[dict[str, Any]], names: list[str], values: list[float], k: int, seed: int
) -> None:
    fold_of = _folds([r["id"] for r in plain], k, seed)
    grid = [dict(zip(names, c, strict=True)) for c in itertools.product(values, repeat=len(names))]
    oof: dict[str, dict[str, Any] | None] = {}
    for fold in range(k):
        train = [r for r in plain if fold_of[r["id"]] != fold]

        def objective(w: dict[str, float], rows: list[dict[str, Any]] = train) -> tuple[Any, ...]:
            hits, wrong = _tally(rows, [_choose(r["candidates"], w) for r in rows])
            return (hits, -wrong, -sum(abs(v) for v in w.values()))

        best = max(grid, key=objective)
        print(f"  fold {fold}: {best} train (hits, -wrong step) {objective(best)[:2]}")
        oof.update(
            {r["id"]: _choose(r["candidates"], best) for r in plain if fold_of[r["id"]] == fold}
        )
    for name in [*sorted({r["file"] for r in plain}), "all"]:
        sub = [r for r in plain if name in ("all", r["file"])]
        before = _tally(sub, [_choose(r["candidates"], {}) for r in sub])
        after = _tally(sub, [oof[r["id"]] for r in sub])
        print(
            f"  {name:<18} {len(sub):>4} cases: action hits {before[0]} -> {after[0]}, "
            f"wrong step {before[1]} -> {after[1]}"
        )


class _Figures:
    def __init__(self, values: dict[str, float]) -> None:
        self.values = values

    def value(self, name: str) -> float:
        return float(self.values[name])


def _figures(row: dict[str, Any]) -> _Figures:
    values = dict(row["strength"])
    ranked = row["candidates"]
    scores = [sum(c["parts"].values()) for c in ranked]
    values["step_margin"] = min(scores[0] - scores[1], 2.0) if len(scores) > 1 else 2.0
    other = [
        s
        for c, s in zip(ranked, scores, strict=True)
        if ranked and c["runbook"] != ranked[0]["runbook"]
    ]
    values["rb_margin"] = min(scores[0] - other[0], 3.0) if other else 3.0
    values["same_runbook"] = (
        sum(c["runbook"] == ranked[0]["runbook"] for c in ranked) if ranked else 0
    )
    values["frames"] = float(row["frames"] > 0)
    values.update(ranked[0]["signals"] if ranked else {})
    return _Figures(values)


def _auc(p: list[float], y: list[bool]) -> float:
    pos, neg = (
        [a for a, b in zip(p, y, strict=True) if b],
        [a for a, b in zip(p, y, strict=True) if not b],
    )
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / max(len(pos) * len(neg), 1)


def _confidence(rows: list[dict[str, Any]], extra: list[str], k: int) -> None:
    from rca.suggestion.calibration import choose_threshold, fit_logistic

    figures, labels = [_figures(r) for r in rows], [bool(r["hit"]) for r in rows]
    base_ids = sorted({r["id"].removesuffix("-loco") for r in rows})
    for features in (STRENGTH, STRENGTH + extra):
        for seed in range(3):
            fold_of = _folds(base_ids, k, seed)
            fold = [fold_of[r["id"].removesuffix("-loco")] for r in rows]
            p, t = [0.0] * len(rows), [0.0] * len(rows)
            for f in range(k):
                train = [i for i in range(len(rows)) if fold[i] != f]
                fit = fit_logistic(
                    [figures[i] for i in train], [labels[i] for i in train], features
                )
                threshold = choose_threshold(
                    [fit.probability(figures[i]) for i in train],
                    [labels[i] for i in train],
                    min_answered=0.3,
                )
                for i in range(len(rows)):
                    if fold[i] == f:
                        p[i], t[i] = fit.probability(figures[i]), threshold
            for subset, keep in (
                ("all rows", lambda r: True),
                ("as collected", lambda r: not r["augmented"]),
            ):
                idx = [i for i, r in enumerate(rows) if keep(r)]
                answered = [i for i in idx if p[i] >= t[i]]
                right = sum(labels[i] for i in answered)
                wrong = len(answered) - right
                auc = _auc([p[i] for i in idx], [labels[i] for i in idx])
                print(
                    f"  {'+'.join(features):<40} seed {seed} {subset:<12}: right {right}, "
                    f"wrong {wrong}, right - wrong {right - wrong}, AUC {auc:.3f}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "rca" / "runbooks"))
    parser.add_argument("--dump", help="write the rows here (JSON)")
    parser.add_argument("--rows", help="read the rows of an earlier --dump (no retrieval)")
    parser.add_argument("--cv", type=int, default=0, help="K-fold CV of --signals weights")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--signals", default="name_w", help="support signals, comma-separated")
    parser.add_argument("--values", default="-1,-0.5,-0.25,0,0.25,0.5,1,1.5,2")
    parser.add_argument("--confidence", help="extra confidence figures, comma-separated")
    args = parser.parse_args()
    if args.rows:
        sys.path.insert(0, str(REPO))
        rows = json.loads(Path(args.rows).read_text(encoding="utf-8"))
    else:
        setup_django()
        rows = _dump(args.corpus)
    if args.dump:
        Path(args.dump).write_text(json.dumps(rows), encoding="utf-8")
    plain = [r for r in rows if not r["augmented"]]
    _measure(plain)
    if args.cv:
        for signal in args.signals.split(","):
            print(f"{signal}, {args.cv}-fold, seed {args.seed}:")
            _cross_validate(
                plain, [signal], [float(v) for v in args.values.split(",")], args.cv, args.seed
            )
    if args.confidence:
        _confidence(rows, args.confidence.split(","), args.cv or 5)


if __name__ == "__main__":
    main()
