"""Validation of the offline provider's suggestions before and after its filter (issue 16).

    .venv/bin/python bench/suggest_premises.py CASES.jsonl [CASES.jsonl ...] [--corpus DIR] [--k 5]

For each case of the ``dev`` split (rows with another split are never read past their
``split`` field: holdout stays unseen), retrieval as ``rca eval --suggest`` runs it (hybrid,
default fusion, top ``--k``), then:

- every step of the runbooks the offline provider may choose from, composed as written and
  validated (:func:`rca.suggestion.providers.step_ranking.audit_candidates`): how many pass,
  how many fail a premise, how many carry an unfilled placeholder;
- the final suggestion, validated as the worker does.

The unfiltered figure is what the final pass rate would be if the ranking did not skip
steps that fail validation; the list of rejected steps says which harmful ones were caught.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from _env import REPO, setup_django


def _dev_cases(paths: list[str]) -> list[dict[str, Any]]:
    cases = []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case.get("split", "dev") == "dev":
                    cases.append(case)
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="+")
    parser.add_argument("--corpus", default=str(REPO / "rca" / "runbooks"))
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--rejected", action="store_true", help="list every rejected step")
    args = parser.parse_args()
    setup_django()

    from rca.corpus.embeddings import embed
    from rca.evaluation.run import case_incident, load_bodies, load_index
    from rca.retrieval.hybrid import search
    from rca.retrieval.signals import build_signals
    from rca.suggestion.evidence import context_for, evidence_from_retrieved
    from rca.suggestion.providers import OfflineProvider
    from rca.suggestion.providers.step_ranking import audit_candidates
    from rca.suggestion.validation import validate

    cases = _dev_cases(args.cases)
    index, _ = load_index(args.corpus)
    bodies = load_bodies(args.corpus, index.slugs)
    incidents = [case_incident(case) for case in cases]
    signals = [build_signals(incident) for incident in incidents]
    vectors = embed([s.embedding_text() for s in signals])
    totals = {"steps": 0, "valid": 0, "premise_contradicted": 0, "unfilled_placeholder": 0}
    final_ok = 0
    for case, incident, sig, vector in zip(cases, incidents, signals, vectors, strict=True):
        ctx = context_for(
            incident, evidence_from_retrieved(search(sig, vector, k=args.k, index=index), bodies)
        )
        audit = audit_candidates(ctx)
        for key in totals:
            totals[key] += getattr(audit, key)
        draft = OfflineProvider().suggest(ctx)
        final_ok += validate(draft, ctx).ok
        for slug, step, action, complaints in audit.rejected:
            harm = [
                c
                for c in complaints
                if "already set" in c or "does not apply" in c or "placeholder" in c
            ]
            if harm or args.rejected:
                print(f"{case['id']:>6} rejected {slug} step {step}: {action[:90]}")
                for complaint in harm or complaints:
                    print(f"         {complaint[:160]}")
    n, steps = len(cases), max(totals["steps"], 1)
    rows = [
        ("candidate steps passing validation (unfiltered)", totals["valid"] / steps),
        ("  failing a premise", totals["premise_contradicted"] / steps),
        ("  with an unfilled placeholder", totals["unfilled_placeholder"] / steps),
        ("final suggestions passing validation", final_ok / max(n, 1)),
    ]
    print(f"cases {n}; candidate steps {totals['steps']}")
    for label, value in rows:
        print(f"{label:<50}{value:.3f}")


if __name__ == "__main__":
    main()
