"""`manage.py rca eval --suggest`: the offline provider's suggestions on labelled cases.

Runs the worker's path (ingest parsing -> signals -> hybrid retrieval over the stored,
embedded corpus -> evidence -> offline provider -> validation) and scores each suggestion by
whether it names any of the case's keywords.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from pytest_django import DjangoDbBlocker

from rca.evaluation.metrics import (
    SuggestResult,
    format_suggest_table,
    keyword_hit,
    summarise_suggestions,
)
from tests.support.corpus import store_embedded_runbooks

DATA = Path(__file__).resolve().parents[1] / "data"
DEV_CASES = DATA / "dev_cases.jsonl"
#: Written by us (not from the dev cases) to estimate generalisation; indicative only.
HELDOUT_CASES = DATA / "heldout_cases.jsonl"
#: Measured: dev keyword match 0.900 (27/30), held-out 0.806 (29/36); validation 1.0 on both.
#: The floors leave room for two or three cases to move without hiding a real regression.
DEV_KEYWORD_FLOOR = 0.75
#: Measured (in-memory corpus, commit f75a0c8): the calibrated threshold abstains on 11 of
#: these 30 cases (18 of all 90 dev cases): the threshold is chosen on dev rows of which half
#: simulate an incident no runbook covers (bench/calibrate_confidence.py). A bound, not a goal.
DEV_MAX_ABSTAINED = 0.5
HELDOUT_KEYWORD_FLOOR = 0.6
VALIDATION_FLOOR = 0.95


@pytest.fixture(scope="module")
def stored_corpus(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> None:
    """The bundled runbooks stored and embedded (the run's vectors: the corpus is embedded
    by the model once a run, not again here, and never into the user's own cache)."""
    with django_db_blocker.unblock():
        store_embedded_runbooks()


def _suggest_report(cases: Path) -> dict[str, Any]:
    out = io.StringIO()
    call_command(
        "rca", "eval", str(cases), "--suggest", "--json", "--mode", "hybrid",
        "--strategy", "weighted", stdout=out,
    )  # fmt: skip
    report: dict[str, Any] = json.loads(out.getvalue())
    return report


@pytest.mark.django_db
def test_suggestions_on_the_dev_cases_name_the_fix_and_validate(stored_corpus: None) -> None:
    report = _suggest_report(DEV_CASES)
    suggest = report["suggest"]
    assert suggest["provider"] == "offline" and suggest["cases"] == 30
    # Abstentions ("no confident suggestion") are misses in keyword_match; the floor holds
    # for the cases answered, and few dev cases (each has its runbook) may abstain.
    assert suggest["abstained"] <= DEV_MAX_ABSTAINED, suggest["abstentions"]
    assert suggest["answered"]["keyword_match"] >= DEV_KEYWORD_FLOOR, suggest["keyword_misses"]
    assert suggest["validation_pass"] >= VALIDATION_FLOOR, suggest["invalid"]
    rows = {row["id"]: row for row in suggest["suggestions"]}
    assert len(rows) == 30
    assert all(row["action"] and row["runbook"] for row in rows.values())
    assert all(0 < row["confidence"] < 1 for row in rows.values())
    for case_id in suggest["abstentions"]:
        assert rows[case_id]["abstained"] and not rows[case_id]["keyword_hit"]
    assert suggest["candidates"]["steps"] >= 30  # validation before the provider's filter
    assert 0 < suggest["candidates"]["validation_pass"] <= 1
    assert "hybrid-weighted" in report["runs"]  # the retrieval figures are still there


@pytest.mark.django_db
def test_suggestions_on_held_out_cases(stored_corpus: None) -> None:
    suggest = _suggest_report(HELDOUT_CASES)["suggest"]
    assert suggest["cases"] == 36
    assert suggest["keyword_match"] >= HELDOUT_KEYWORD_FLOOR, suggest["keyword_misses"]
    assert suggest["validation_pass"] >= VALIDATION_FLOOR, suggest["invalid"]


@pytest.mark.django_db
def test_text_report_lists_rates_and_each_case(stored_corpus: None) -> None:
    out = io.StringIO()
    call_command(
        "rca", "eval", str(DEV_CASES), "--suggest", "--verbose", "--mode", "bm25", stdout=out
    )
    text = out.getvalue()
    assert "suggestions (offline provider)" in text
    assert "keyword match" in text and "validation pass" in text
    assert " c001 [" in text and " c117 [" in text


def test_keyword_match_is_any_keyword_case_insensitively() -> None:
    assert keyword_hit("Set `PYTORCH_CUDA_ALLOC_CONF`", ["alloc_conf", "nothing"])
    assert not keyword_hit("Reduce the batch size.", ["no_grad", "inference"])
    assert not keyword_hit("anything", [])
    results = [
        SuggestResult("a", "x", "Use no_grad.", "r", "rb", True, True),
        SuggestResult("b", "x", "Do it.", "r", "rb", False, True),
        SuggestResult("c", "y", "Fix.", "r", "rb", True, False, ("bad verb",)),
        SuggestResult("d", "y", "Fix.", "r", "rb", True, True),
    ]
    summary = summarise_suggestions(results)
    assert (summary.keyword_match, summary.validation_pass) == (0.75, 0.75)
    assert summary.keyword_misses == ["b"] and summary.invalid == ["c"]
    assert summary.per_category["x"] == {"cases": 2, "keyword_match": 0.5, "validation_pass": 1.0}
    table = format_suggest_table(summary, results)
    assert "-  b [rb] Do it." in table and "+! c [rb] Fix." in table and "bad verb" in table
