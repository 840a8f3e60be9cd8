"""Which validation check rejects which runbook step, over every dev case's candidate steps.

    SECRET_KEY=x RCA_DATA_DIR=... .venv/bin/python bench/validation_audit.py [--corpus DIR]
        [--json OUT] [--examples N]

For every dev case of ``rca eval --realworld-dev`` plus ``tests/data/dev_cases.jsonl`` the
incident is retrieved as the worker would (hybrid, top 5) and every step of the candidate
runbooks is composed and validated as ``step_ranking.audit_candidates`` does (values filled,
asides kept, no premise skipped). Each check of :func:`rca.suggestion.validation.validate`
is then asked on its own, so a step failing two checks counts for both. Printed: steps
rejected per check, and per runbook step how often it was a candidate and how often each
check rejected it; steps rejected on EVERY incident where they were candidates are marked
``ALWAYS``: a step that never validates is dead knowledge, or a check's false alarm.

Why: a check that misreads runbook wording (``x.size(0)`` read as a tensor dimension of 0)
silently removes the step from every incident; the eval's per-case ``candidates`` figures
show that steps fail, not which check fails them.

Measured 2026-12-06 on 5e30776 (295 dev cases, 1622 candidate steps): valid 1380 -> 1383
after reading axes as axes (dimensions 1 -> 0: ``permute(0, 3, 1, 2)`` read as sizes 0 and 2)
and a bare file name the cited runbook writes as its own (code_locations 2 -> 0: the project
``llama.cpp``); placeholders 88 and premises 153 unchanged, format 3. Steps rejected on every
incident where they were candidates 14 -> 13, all the rest by premises.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

from _env import REPO, setup_django

CHECKS = (
    "format",
    "grounded",
    "code_locations",
    "urls",
    "dimensions",
    "placeholders",
    "premises",
    "layer_resize",
    "added_axis",
    "file_location",
)


def _cases() -> list[dict[str, Any]]:
    """The dev lines of ``tests/data/dev_cases.jsonl`` and the realworld dev files."""
    from rca.evaluation.suite import REALWORLD_DEV_FILES

    cases = []
    for path in [REPO / "tests/data/dev_cases.jsonl", *REALWORLD_DEV_FILES]:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case.get("split", "dev") == "dev":
                    cases.append(case)
    return cases


def _failed_checks(draft: Any, ctx: Any, premises: Any) -> list[str]:
    """The checks of ``validate`` that ``draft`` fails, each asked on its own."""
    from rca.suggestion import validation as v
    from rca.suggestion.checks.added_axis import added_axis_violations
    from rca.suggestion.checks.code_locations import unmatched_locations
    from rca.suggestion.checks.file_location import location_violations
    from rca.suggestion.checks.layer_resize import resize_violations
    from rca.suggestion.checks.placeholders import template_remnants
    from rca.suggestion.premises import premise_complaints

    text = f"{draft.action or ''}\n{draft.reason or ''}"
    sources = v._cited_runbook_texts(draft.runbook, ctx)
    named, missing = unmatched_locations(text, ctx.frames, sources)
    path_match = (len(named) - len(missing)) / len(named) if named else 1.0
    verdicts = {
        "format": not v.format_ok(draft.action, draft.reason)[0],
        "grounded": not v.grounded(draft.runbook, ctx.allowed_slugs),
        "code_locations": path_match < v.MIN_STACK_PATH_MATCH,
        "urls": bool(v.unsourced_urls(text, sources)),
        "dimensions": v.unknown_dim_share(text, ctx.shape_diff) > v.MAX_UNKNOWN_DIM_SHARE,
        "placeholders": bool(template_remnants(text)),
        "premises": bool(premise_complaints(draft, ctx, premises)),
        "layer_resize": bool(resize_violations(draft.action or "", premises.facts, ctx.shape_diff)),
        "added_axis": bool(added_axis_violations(draft.action or "", premises.facts)),
        "file_location": bool(location_violations(draft.action or "", premises.facts)),
    }
    return [name for name in CHECKS if verdicts[name]]


def audit(corpus: str, examples: int) -> dict[str, Any]:
    from rca.corpus.embeddings import embed
    from rca.evaluation.run import case_incident, load_bodies, load_index
    from rca.retrieval.hybrid import search
    from rca.retrieval.signals import build_signals
    from rca.suggestion.checks.dimensions import diff_dims, named_dims
    from rca.suggestion.evidence import context_for, evidence_from_retrieved
    from rca.suggestion.premises import read_premises
    from rca.suggestion.providers.draft import Draft
    from rca.suggestion.providers.step_ranking import _candidate_runbooks
    from rca.suggestion.providers.wording import compose, split_step
    from rca.suggestion.step_values import fill_values, incident_values
    from rca.suggestion.validation import validate

    index, _ = load_index(corpus)
    bodies = load_bodies(corpus, index.slugs)
    cases = _cases()
    incidents = [case_incident(case) for case in cases]
    signals = [build_signals(incident) for incident in incidents]
    vectors = embed([s.embedding_text() for s in signals])
    per_check: collections.Counter[str] = collections.Counter()
    seen: collections.Counter[tuple[str, int]] = collections.Counter()
    rejected: dict[tuple[str, int], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    failed_any: collections.Counter[tuple[str, int]] = collections.Counter()
    actions: dict[tuple[str, int], str] = {}
    shown: dict[tuple[str, int], list[str]] = collections.defaultdict(list)
    steps = valid = 0
    for case, incident, sig, vector in zip(cases, incidents, signals, vectors, strict=True):
        found = search(sig, vector, k=5, index=index)
        if not found:
            continue
        ctx = context_for(incident, evidence_from_retrieved(found, bodies))
        premises, values = read_premises(ctx), incident_values(ctx)
        known = diff_dims(ctx.shape_diff)
        for item in _candidate_runbooks(ctx):
            for position, step in enumerate(item.remediation, 1):
                action, reason = compose(item, *split_step(fill_values(step, values)), ctx)
                draft = Draft(
                    action, reason, runbook=item.slug, confidence=0.0, provider="", model=""
                )
                failed = _failed_checks(draft, ctx, premises)
                key = (item.slug, position)
                steps += 1
                seen[key] += 1
                actions.setdefault(key, action)
                valid += not failed
                failed_any[key] += bool(failed)
                for name in failed:
                    per_check[name] += 1
                    rejected[key][name] += 1
                if "dimensions" in failed and len(shown[key]) < examples:
                    text = f"{action}\n{reason}"
                    unknown = sorted(named_dims(text) - known)
                    shown[key].append(f"{case.get('id')}: unknown dims {unknown}")
                elif failed and failed != ["placeholders"] and len(shown[key]) < examples:
                    said = validate(draft, ctx, premises).complaints
                    shown[key].append(f"{case.get('id')}: {' | '.join(said)[:300]}")
    rows = [
        {
            "runbook": slug,
            "step": position,
            "candidate": seen[(slug, position)],
            "rejected": failed_any[(slug, position)],
            "always": failed_any[(slug, position)] == seen[(slug, position)],
            "checks": dict(rejected[(slug, position)]),
            "action": actions[(slug, position)][:110],
            "examples": shown.get((slug, position), []),
        }
        for slug, position in sorted(seen)
        if failed_any[(slug, position)]
    ]
    return {
        "cases": len(cases),
        "steps": steps,
        "valid": valid,
        "per_check": {name: per_check[name] for name in CHECKS},
        "distinct_steps": len(seen),
        "steps_rejected_somewhere": len(rows),
        "steps_always_rejected": sum(r["always"] for r in rows),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="rca/runbooks")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument(
        "--examples", type=int, default=2, help="complaints shown per rejected step"
    )
    args = parser.parse_args()
    setup_django()
    result = audit(args.corpus, args.examples)
    out = sys.stdout
    out.write(
        f"{result['cases']} dev cases, {result['steps']} candidate steps, {result['valid']}"
        f" valid; {result['distinct_steps']} distinct steps, {result['steps_rejected_somewhere']}"
        f" rejected somewhere, {result['steps_always_rejected']} on every incident\n"
    )
    out.write("rejections per check (a step may fail several):\n")
    for name, count in result["per_check"].items():
        out.write(f"  {name:16s}{count}\n")
    out.write("\nrejected steps (candidate / rejected, per check):\n")
    for row in sorted(result["rows"], key=lambda r: (not r["always"], -r["rejected"])):
        mark = "ALWAYS" if row["always"] else "      "
        checks = " ".join(f"{k}={n}" for k, n in sorted(row["checks"].items()))
        out.write(
            f"{mark} {row['runbook']}#{row['step']} {row['candidate']}/{row['rejected']}"
            f" {checks}\n       {row['action']}\n"
        )
        for example in row["examples"]:
            out.write(f"       - {example}\n")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
