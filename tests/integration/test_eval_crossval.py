"""`rca eval` over several corpora in one run, with cross-validation and the evidence
ablation (real embeddings; scratch corpora from files, the stored one untouched)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from rca.corpus.files import bundled_runbook_dir
from rca.evaluation.ablation import PARTS

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


def _cases(tmp_path: Path, count: int = 6) -> Path:
    """The first ``count`` dev cases: enough for folds, light enough for a loaded machine
    (the ablation re-embeds every case once per evidence part and corpus)."""
    lines = DEV_CASES.read_text(encoding="utf-8").splitlines()[:count]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _corpus(directory: Path, names: tuple[str, ...]) -> Path:
    directory.mkdir()
    for name in names:
        shutil.copy(bundled_runbook_dir() / name, directory / name)
    return directory


@pytest.mark.django_db
def test_two_corpora_cross_validated_and_ablated_in_one_json_report(tmp_path: Path) -> None:
    first = _corpus(tmp_path / "first", ("cuda-oom-inference.md", "nccl-timeout-watchdog.md"))
    second = _corpus(
        tmp_path / "second", ("dtype-mismatch-half-float.md", "ddp-unused-parameters.md")
    )
    out = io.StringIO()
    call_command(
        "rca", "eval", str(_cases(tmp_path)), "--corpus", str(first), "--corpus", str(second),
        "--cv", "3", "--ablation", "--mode", "hybrid", "--json", stdout=out,
    )  # fmt: skip
    report = json.loads(out.getvalue())
    default = report["default"]
    assert default in report["runs"]  # the first corpus' runs, as before
    assert set(report["corpora"]) == {"first", "second"}
    assert report["corpora"]["second"]["runbooks"] == 2
    for corpus in report["corpora"].values():
        run = corpus["runs"][default]
        assert {"hit@1", "hit@3", "mrr@5", "empty"} <= set(run) and run["cases"] == 6
    # of the six cases (cuda_oom twice, then four other kinds) only the two OOMs have a runbook
    # of their kind in "first", none in "second": every hit is a covered case's
    first_run = report["corpora"]["first"]["runs"][default]
    assert first_run["covered"]["cases"] == 2
    assert first_run["covered"]["hit@1"] == pytest.approx(first_run["hit@1"] * 6 / 2, abs=1e-3)
    assert report["corpora"]["second"]["runs"][default]["covered"]["cases"] == 0
    cv = report["cv"]
    assert cv["run"] == default and cv["folds"] == 3 and len(cv["chosen"]) == 3
    # every case is scored exactly once, on the fold it was held out of
    assert all(m["cases"] == 6 for m in cv["corpora"].values())
    assert set(report["ablation"]) == {"(all evidence)", *PARTS}
    assert (
        report["ablation"]["(all evidence)"]["first"] == report["corpora"]["first"]["runs"][default]
    )


@pytest.mark.django_db
def test_text_report_compares_corpora_and_shows_the_cross_validated_row(tmp_path: Path) -> None:
    first = _corpus(tmp_path / "first", ("cuda-oom-inference.md", "nccl-timeout-watchdog.md"))
    out = io.StringIO()
    call_command(
        "rca", "eval", str(_cases(tmp_path)), "--corpus", str(first), "--ignore-signals",
        "--cv", "2", "--mode", "bm25", stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "== first (no signals): 6 cases" in text
    assert "hit@1 of covered cases" in text and "(2)" in text  # 2 of the 6 have a runbook
    assert "(2-fold CV)" in text and "weights chosen per fold" in text
