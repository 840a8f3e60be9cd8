"""`manage.py rca eval [CASES.jsonl] ...`: score retrieval; `manage.py rca sweep`: unstick analyses.

Runs the worker's own signal + retrieval code over labelled cases and prints hit@1, hit@3,
MRR@5 and the empty rate, overall and per class, for each mode and fusion strategy. With
``--suggest`` it also has the offline provider write each case's suggestion from the
worker's default retrieval, validates it, and prints the share of cases whose suggestion
contains any of the case's ``keywords`` (case-insensitive) and the validation pass rate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

DEFAULT_CASES = Path(__file__).resolve().parents[3] / "tests" / "data" / "dev_cases.jsonl"


class Command(BaseCommand):
    help = (
        "Analysis tools; `rca eval` scores runbook retrieval (and, with --suggest, the "
        "offline suggestions) against labelled cases."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        ev = sub.add_parser("eval", help="hit@1 / hit@3 / MRR@5 of retrieval on labelled cases")
        ev.add_argument("cases", nargs="?", type=Path, default=DEFAULT_CASES)
        ev.add_argument(
            "--corpus",
            type=Path,
            default=None,
            help="score against the runbooks of this directory (a scratch corpus in memory; "
            "the stored corpus is not touched)",
        )
        ev.add_argument(
            "--ignore-signals",
            action="store_true",
            help="with --corpus: score its runbooks as if they had no `signals` (plain Markdown)",
        )
        ev.add_argument("--mode", choices=["all", "hybrid", "bm25", "dense"], default="all")
        ev.add_argument("--strategy", choices=["both", "weighted", "rrf"], default="both")
        ev.add_argument("--k", type=int, default=5)
        ev.add_argument("--json", action="store_true", help="machine-readable output")
        ev.add_argument(
            "--suggest",
            action="store_true",
            help="also score the offline provider's suggestions: keyword match and "
            "validation pass rate (retrieval: hybrid, default fusion, top --k)",
        )
        ev.add_argument(
            "--verbose",
            "-V",
            action="store_true",
            dest="show_cases",
            help="with --suggest: print each case's suggested action and cited runbook",
        )
        sw = sub.add_parser("sweep", help="re-enqueue analyses stuck in pending/analyzing")
        sw.add_argument("--older-than", type=int, default=None, help="seconds (default: setting)")

    def handle(self, *args: str, action: str, **options: Any) -> None:
        if action == "eval":
            self._eval(**options)
        elif action == "sweep":
            self._sweep(options.get("older_than"))

    def _sweep(self, older_than: int | None) -> None:
        from datetime import timedelta

        from rca.queue.sweeper import sweep

        ids = sweep(timedelta(seconds=older_than) if older_than is not None else None)
        self.stdout.write(f"re-enqueued {len(ids)} stuck analyses" + (f": {ids}" if ids else ""))

    def _eval(
        self, cases: Path, corpus: Path | None, mode: str, strategy: str, k: int, **options: Any
    ) -> None:
        from rca.evaluation.metrics import format_table
        from rca.evaluation.run import evaluate, load_cases, load_index, run_names

        try:
            labelled = load_cases(cases)
            index, note = load_index(corpus, ignore_signals=options.get("ignore_signals", False))
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        report = evaluate(labelled, index, run_names(mode, strategy), k=k)
        suggested = None
        if options.get("suggest"):
            from rca.evaluation.metrics import summarise_suggestions
            from rca.evaluation.run import evaluate_suggestions, load_bodies

            results = evaluate_suggestions(labelled, index, load_bodies(corpus, index.slugs), k=k)
            suggested = (results, summarise_suggestions(results))
        if options["json"]:
            payload = {
                "cases": str(cases),
                "corpus": str(corpus) if corpus else "stored",
                "runbooks": len(index),
                "runs": {name: metrics.as_dict() for name, metrics in report.items()},
            }
            if suggested is not None:
                results, summary = suggested
                payload["suggest"] = {
                    "provider": "offline",
                    **summary.as_dict(),
                    "suggestions": [
                        {
                            "id": r.case_id,
                            "runbook": r.runbook,
                            "action": r.action,
                            "reason": r.reason,
                            "keyword_hit": r.keyword_hit,
                            "valid": r.valid,
                            "complaints": list(r.complaints),
                        }
                        for r in results
                    ],
                }
            self.stdout.write(json.dumps(payload, indent=2))
            return
        if note:
            self.stdout.write(note)
        self.stdout.write(f"{len(labelled)} cases from {cases}; {len(index)} runbooks\n")
        self.stdout.write(format_table(report))
        if suggested is not None:
            from rca.evaluation.metrics import format_suggest_table

            results, summary = suggested
            self.stdout.write("\nsuggestions (offline provider)\n")
            shown = results if options.get("show_cases") else ()
            self.stdout.write(format_suggest_table(summary, shown))
