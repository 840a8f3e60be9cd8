"""`rca eval` says how many cases a corpus can hit at all, so a case whose failure class no
runbook of the corpus has (a coverage gap) is not read as a ranking error."""

from __future__ import annotations

import json
from pathlib import Path

from rca.evaluation.run import load_runbooks
from rca.evaluation.suite import covered_cases
from rca.retrieval.index import index_from_runbooks

PLAIN = "# Keras stops early\n\n## Symptoms\n\n- `Your input ran out of data`\n"
WITH_CLASS = "---\nfailure_class: cuda_oom\n---\n# Out of memory\n\nText.\n"


def test_cases_count_as_covered_only_when_a_runbook_has_their_class(tmp_path: Path) -> None:
    (tmp_path / "ran-out.md").write_text(PLAIN, encoding="utf-8")
    (tmp_path / "oom.md").write_text(WITH_CLASS, encoding="utf-8")
    (tmp_path / "classes.json").write_text(
        json.dumps({"ran-out": "data_pipeline_exhausted"}), encoding="utf-8"
    )
    index = index_from_runbooks(load_runbooks(tmp_path), embed=False)
    categories = ["cuda_oom", "data_pipeline_exhausted", "cuda_oom", "nan_loss", "port_in_use"]
    # nan_loss is a taxonomy class the folder lacks; port_in_use is no class at all
    assert covered_cases(categories, index) == 3
    assert covered_cases([], index) == 0
