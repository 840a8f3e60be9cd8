"""`manage.py rca eval [CASES.jsonl] ...`: score retrieval; `manage.py rca sweep`: unstick analyses.

Runs the worker's own signal + retrieval code over labelled cases and prints hit@1, hit@3,
MRR@5 and the empty rate, overall and per class, for each mode and fusion strategy. With
``--suggest`` it also has the offline provider write each case's suggestion from the
worker's default retrieval, validates it, and prints the share of cases whose suggestion
contains any of the case's ``keywords`` (case-insensitive), in the action alone and in
action + reason, the abstentions ("no confident suggestion", counted neither as hits nor as
helpful; for them ``action`` is the best guess), and validation on every candidate step
before the provider's filter and on the final output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

DEFAULT_CASES = Path(__file__).resolve().parents[3] / "tests" / "data" / "dev_cases.jsonl"


def select_split(
    cases: list[dict[str, Any]], split: str | None, source: Path | str = "the file"
) -> list[dict[str, Any]]:
    """`rca eval --split NAME`: only the cases whose `split` field is NAME (e.g. `holdout2`,
    the second real-world holdout, eval/realworld/cases-c.jsonl); all of them without one."""
    if split is None:
        return cases
    kept = [case for case in cases if case.get("split") == split]
    if not kept:
        raise ValueError(f"no case of {source} has split {split!r}")
    return kept


class Command(BaseCommand):
    help = (
        "Analysis tools; `rca eval` scores runbook retrieval (and, with --suggest, the "
        "offline suggestions) against labelled cases."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        ev = sub.add_parser("eval", help="hit@1 / hit@3 / MRR@5 of retrieval on labelled cases")
        ev.add_argument(
            "cases",
            nargs="*",
            type=Path,
            help="JSONL case files, scored together (default: tests/data/dev_cases.jsonl)",
        )
        ev.add_argument(
            "--corpus",
            type=Path,
            action="append",
            default=None,
            help="score against the runbooks of this directory (a scratch corpus in memory; "
            "the stored corpus is not touched); repeat to score several corpora in one run",
        )
        ev.add_argument(
            "--ignore-signals",
            action="store_true",
            help="with --corpus: score its runbooks as if they had no `signals` (plain Markdown)",
        )
        ev.add_argument(
            "--suite",
            action="store_true",
            help="score in one run the bundled corpus, corpora/independent and "
            "corpora/independent without signals (when present), and the bundled corpus "
            "without signals",
        )
        ev.add_argument(
            "--cv",
            type=int,
            default=0,
            metavar="K",
            help="K-fold cross-validation of the default run: its weights tuned on the other "
            "folds among the settings the noise guard admits, scored on the held-out one",
        )
        ev.add_argument(
            "--rerank",
            action="store_true",
            help="with --cv: also a re-ranker of the default's top 10 on features beyond the "
            "two scores, fitted on the other folds (measurement only, not the serving path)",
        )
        ev.add_argument(
            "--ablation",
            action="store_true",
            help="hit@1 of the default run with each part of the query's evidence removed",
        )
        ev.add_argument(
            "--realworld-dev",
            action="store_true",
            help="also score the `split: dev` cases of eval/realworld's development files "
            "(rca.evaluation.suite.REALWORLD_DEV_FILES; never its holdout files)",
        )
        ev.add_argument(
            "--split",
            default=None,
            help="score only the cases whose `split` field is this (dev, holdout, holdout2)",
        )
        ev.add_argument("--mode", choices=["all", "hybrid", "bm25", "dense"], default="all")
        ev.add_argument(
            "--strategy", choices=["both", "calibrated", "weighted", "rrf"], default="both"
        )
        ev.add_argument("--k", type=int, default=5)
        ev.add_argument("--json", action="store_true", help="machine-readable output")
        ev.add_argument(
            "--suggest",
            action="store_true",
            help="also score the offline provider's suggestions: keyword match, abstentions, "
            "validation of the candidate steps and of the final output (retrieval: hybrid, "
            "default fusion, top --k)",
        )
        ev.add_argument(
            "--verbose",
            "-V",
            action="store_true",
            dest="show_cases",
            help="with --suggest: print each case's suggested action and cited runbook; with "
            "--validation-probe: each line's verdict (never a line of the hold half)",
        )
        ev.add_argument(
            "--validation-probe",
            type=Path,
            default=None,
            metavar="FILE",
            help="score validation on a probe of labelled answers (eval/validation/*.jsonl): "
            "verdicts right, harmful passing, right rejected, per half",
        )
        ev.add_argument(
            "--half",
            choices=["tune", "hold", "all"],
            default="all",
            help="with --validation-probe: score only this half (hold: aggregates only)",
        )
        sw = sub.add_parser("sweep", help="re-enqueue analyses stuck in pending/analyzing")
        sw.add_argument("--older-than", type=int, default=None, help="seconds (default: setting)")

    def handle(self, *args: str, action: str, **options: Any) -> None:
        if action == "eval" and options.get("validation_probe"):
            self._validation_probe(options["validation_probe"], **options)
        elif action == "eval":
            self._eval(**options)
        elif action == "sweep":
            self._sweep(options.get("older_than"))

    def _validation_probe(self, path: Path, **options: Any) -> None:
        from rca.evaluation.validation_probe import probe_report

        corpus = options.get("corpus") or [None]
        try:
            report = probe_report(
                path,
                half=options["half"],
                corpus=corpus[0],
                k=options["k"],
                verbose=options["show_cases"],
                as_json=options["json"],
            )
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(report)

    def _sweep(self, older_than: int | None) -> None:
        from datetime import timedelta

        from rca.queue.sweeper import sweep

        ids = sweep(timedelta(seconds=older_than) if older_than is not None else None)
        self.stdout.write(f"re-enqueued {len(ids)} stuck analyses" + (f": {ids}" if ids else ""))

    def _eval(
        self,
        cases: list[Path],
        corpus: list[Path] | None,
        mode: str,
        strategy: str,
        k: int,
        **options: Any,
    ) -> None:
        from rca.evaluation.metrics import summarise
        from rca.evaluation.run import DEFAULT_RUN, load_cases, prepare, results, run_names
        from rca.evaluation.suite import (
            corpus_specs,
            covered_cases,
            load_corpora,
            realworld_dev_cases,
        )
        from rca.evaluation.tables import format_corpora, format_table

        specs = corpus_specs(corpus, options["ignore_signals"], options["suite"])
        files = cases or [DEFAULT_CASES]
        source = " + ".join(str(f) for f in files)
        try:
            labelled = [
                case
                for path in files
                for case in select_split(load_cases(path), options.get("split"), path)
            ]
            if options.get("realworld_dev"):
                labelled += realworld_dev_cases()
                source += " + eval/realworld dev"
            indexes, notes = load_corpora(specs)
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        prepared = {name: prepare(labelled, index) for name, index in indexes.items()}
        names = run_names(mode, strategy)
        reports = {
            label: {run: summarise(results(p, run, k=k)) for run in names}
            for label, p in prepared.items()
        }
        categories = [str(case.get("category", "")) for case in labelled]
        covered = {label: covered_cases(categories, i) for label, i in indexes.items()}
        first = next(iter(prepared))
        index = indexes[first]
        cv = ablation = suggested = None
        if options["cv"]:
            from rca.evaluation.crossval import cross_validate

            cv = cross_validate(prepared, folds=options["cv"], k=k)
        reranked = None
        if options.get("rerank") and options["cv"]:
            from rca.evaluation.rerank_fit import cross_validate_rerank

            reranked = cross_validate_rerank(prepared, folds=options["cv"], k=k)
        if options["ablation"]:
            from rca.evaluation.ablation import ablate

            ablation = ablate(prepared, k=k)
        if options.get("suggest"):
            from rca.evaluation.metrics import summarise_suggestions
            from rca.evaluation.run import evaluate_suggestions, load_bodies

            directory = specs[0][1]
            bodies = load_bodies(directory, index.slugs)
            found = evaluate_suggestions(labelled, index, bodies, k=k)
            suggested = (found, summarise_suggestions(found))
        if options["json"]:
            payload: dict[str, Any] = {
                "cases": source,
                "split": options.get("split"),
                "corpus": str(specs[0][1]) if specs[0][1] else "stored",
                "runbooks": len(index),
                "default": DEFAULT_RUN,
                "runs": {name: m.as_dict() for name, m in reports[first].items()},
                "corpora": {
                    label: {
                        "corpus": str(spec) if spec else "stored",
                        "ignore_signals": ignore,
                        "runbooks": len(indexes[label]),
                        "cases_of_its_classes": covered[label],
                        "runs": {name: m.as_dict() for name, m in reports[label].items()},
                    }
                    for label, spec, ignore in specs
                },
            }
            if cv is not None:
                payload["cv"] = cv.as_dict()
            if reranked is not None:
                payload["rerank_cv"] = reranked.as_dict()
            if ablation is not None:
                payload["ablation"] = {
                    part: {c: m.as_dict() for c, m in per.items()} for part, per in ablation.items()
                }
            if suggested is not None:
                payload["suggest"] = _suggest_payload(*suggested)
            self.stdout.write(json.dumps(payload, indent=2))
            return
        for note in notes:
            self.stdout.write(note)
        for label, report in reports.items():
            self.stdout.write(
                f"\n== {label}: {len(labelled)} cases from {source}; "
                f"{len(indexes[label])} runbooks; {covered[label]} cases of a class it has\n"
            )
            self.stdout.write(format_table(report))
        extra = {}
        if cv is not None:
            extra[f"{DEFAULT_RUN} ({cv.folds}-fold CV)"] = cv.metrics
        if reranked is not None:
            extra[f"re-ranked top 10 ({reranked.folds}-fold CV)"] = reranked.reranked
        self.stdout.write(f"\n\nhit@1 / MRR@5 per corpus (default: {DEFAULT_RUN})\n")
        self.stdout.write(format_corpora(reports, extra))
        if cv is not None:
            self.stdout.write(f"\nweights chosen per fold: {cv.chosen}")
            self.stdout.write(f"\nexcluded by the noise guard: {cv.excluded}")
        if reranked is not None:
            self.stdout.write(f"\nre-ranker passed the noise guard per fold: {reranked.guard}")
        if ablation is not None:
            from rca.evaluation.ablation import format_ablation

            self.stdout.write("\n" + format_ablation(ablation))
        if suggested is not None:
            from rca.evaluation.metrics import format_suggest_table

            found, summary = suggested
            self.stdout.write("\nsuggestions (offline provider)\n")
            shown = found if options.get("show_cases") else ()
            self.stdout.write(format_suggest_table(summary, shown))


def _suggest_payload(found: Any, summary: Any) -> dict[str, Any]:
    return {
        "provider": "offline",
        **summary.as_dict(),
        "suggestions": [
            {
                "id": r.case_id,
                "runbook": r.runbook,
                "action": r.action,
                "reason": r.reason,
                "keyword_hit": r.keyword_hit,
                "keyword_in_action": r.action_hit,
                "abstained": r.abstained,
                "confidence": r.confidence,
                "valid": r.valid,
                "complaints": list(r.complaints),
            }
            for r in found
        ],
    }
