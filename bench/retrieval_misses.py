"""The dev cases the default fusion misses at rank 1 while BM25 alone is right, and why.

    SECRET_KEY=x .venv/bin/python bench/retrieval_misses.py [--parts]

For each suite corpus (``rca eval --suite``) and the 190 dev cases of ``rca eval
--realworld-dev``: every case where BM25 alone ranks a runbook of the case's class first and
the default run does not. Per case: the two winners' BM25 / its best, raw cosine and signal
(what fusion added up), which term overturned BM25's winner (``dense``: the wrong runbook's
cosine lead outweighs its BM25 deficit; ``signal``: it alone matched a signal), and with
``--parts`` which evidence parts of the query (:data:`rca.evaluation.ablation.PARTS`), removed
one at a time, give the default's first place back to the right class. Dev cases only.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from _env import setup_django


def _terms(ev: Any, position: int, top_bm25: float) -> dict[str, float]:
    import numpy as np

    return {
        "bm25": float(ev.bm25[position]) / top_bm25 if top_bm25 > 0 else 0.0,
        "cosine": float(np.nan_to_num(ev.cosine[position])),
        "signal": float(ev.signal[position]),
    }


def _pull(right: dict[str, float], wrong: dict[str, float]) -> str:
    """Which term put ``wrong`` above ``right`` under the default weights."""
    from rca.retrieval.weights import DEFAULT_WEIGHTS as w

    dense = w.cosine_scale * (wrong["cosine"] - right["cosine"])
    signal = w.signal * (wrong["signal"] - right["signal"])
    lexical = right["bm25"] - wrong["bm25"]
    if signal > 0 and dense <= lexical:
        return "signal"
    if dense > 0 and signal <= 0:
        return "dense"
    return "dense+signal"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", action="store_true", help="also ablate the query per case")
    args = parser.parse_args()
    setup_django()

    from rca.evaluation.ablation import PARTS, _without
    from rca.evaluation.run import case_incident, load_cases, prepare, results
    from rca.evaluation.suite import corpus_specs, load_corpora, realworld_dev_cases
    from rca.retrieval.signals import build_signals
    from rca.retrieval.weights import DEFAULT_WEIGHTS

    cases = [*load_cases("tests/data/dev_cases.jsonl"), *realworld_dev_cases()]
    indexes, _ = load_corpora(corpus_specs(None, False, suite=True))
    print(
        f"{len(cases)} dev cases; default cosine_scale {DEFAULT_WEIGHTS.cosine_scale}, "
        f"signal {DEFAULT_WEIGHTS.signal}"
    )
    pulls: Counter[str] = Counter()
    for label, index in indexes.items():
        prepared = prepare(cases, index)
        bm25 = results(prepared, "bm25")
        fused = results(prepared, "hybrid-calibrated")
        lost = [
            i
            for i, (b, f) in enumerate(zip(bm25, fused, strict=True))
            if b.ranked_classes[:1] == (b.category,) and f.ranked_classes[:1] != (f.category,)
        ]
        print(f"\n{label}: {len(lost)} cases BM25 right, default wrong")
        for i in lost:
            ev, case = prepared.evidence[i], prepared.cases[i]
            top = float(ev.bm25.max())
            right_slug, wrong_slug = bm25[i].ranked_slugs[0], fused[i].ranked_slugs[0]
            right = _terms(ev, index.position_of[right_slug], top)
            wrong = _terms(ev, index.position_of[wrong_slug], top)
            pull = _pull(right, wrong)
            pulls[pull] += 1
            line = (
                f"  {case['id']} ({case.get('category')}): {wrong_slug} over {right_slug}; "
                f"bm25 {wrong['bm25']:.2f} vs {right['bm25']:.2f}, cosine "
                f"{wrong['cosine']:.3f} vs {right['cosine']:.3f}, signal {wrong['signal']:.0f} "
                f"vs {right['signal']:.0f}: {pull}"
            )
            if args.parts:
                signals = build_signals(case_incident(case))
                fixed = []
                for part, names in PARTS.items():
                    one = prepare([case], index, [_without(signals, names)])
                    if results(one, "hybrid-calibrated")[0].ranked_classes[:1] == (
                        case.get("category"),
                    ):
                        fixed.append(part)
                line += f"; right without: {', '.join(fixed) or '-'}"
            print(line)
    print(f"\nwhat overturned BM25's right winner, all corpora: {dict(pulls)}")


if __name__ == "__main__":
    main()
