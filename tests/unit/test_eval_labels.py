"""`rca eval` scores a folder of plain Markdown pages: a page without a failure class takes
the one its folder's `classes.json` names (for scoring only), and `--realworld-dev` adds the
real-world dev cases, never a holdout line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rca.corpus.files import load_directory
from rca.evaluation.labels import with_labels
from rca.evaluation.run import load_runbooks
from rca.evaluation.suite import INDEPENDENT, REALWORLD_DEV_FILES, realworld_dev_cases

PLAIN = "# Keras stops early\n\n## Symptoms\n\n- `Your input ran out of data`\n"
WITH_CLASS = "---\nfailure_class: cuda_oom\n---\n# Out of memory\n\nText.\n"


def _folder(tmp_path: Path, labels: dict[str, str]) -> Path:
    (tmp_path / "ran-out.md").write_text(PLAIN, encoding="utf-8")
    (tmp_path / "oom.md").write_text(WITH_CLASS, encoding="utf-8")
    (tmp_path / "classes.json").write_text(json.dumps(labels), encoding="utf-8")
    return tmp_path


def test_a_plain_page_takes_its_label_and_retrieval_never_sees_the_file(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"ran-out": "data_pipeline_exhausted"})
    assert {rb.slug: rb.failure_class for rb in load_directory(folder)} == {
        "oom": "cuda_oom",
        "ran-out": "",
    }
    scored = {rb.slug: rb.failure_class for rb in load_runbooks(folder, ignore_signals=True)}
    assert scored == {"oom": "cuda_oom", "ran-out": "data_pipeline_exhausted"}


@pytest.mark.parametrize(
    ("labels", "problem"),
    [
        ({"oom": "host_oom"}, "front matter says"),
        ({"missing-page": "cuda_oom"}, "no page"),
        ({"ran-out": "no_such_class"}, "unknown failure class"),
    ],
)
def test_a_wrong_label_is_an_error(tmp_path: Path, labels: dict[str, str], problem: str) -> None:
    folder = _folder(tmp_path, labels)
    with pytest.raises(ValueError, match=problem):
        with_labels(load_directory(folder), folder)


def test_the_independent_corpus_has_plain_pages_and_every_page_a_class() -> None:
    pages = load_runbooks(INDEPENDENT)
    texts = {p.slug: (INDEPENDENT / f"{p.slug}.md").read_text(encoding="utf-8") for p in pages}
    plain = [slug for slug, text in texts.items() if not text.startswith("---\n")]
    assert len(plain) >= 5
    assert all(p.failure_class for p in pages)


def test_realworld_dev_cases_are_only_dev_lines_of_the_dev_files() -> None:
    if not all(path.is_file() for path in REALWORLD_DEV_FILES):
        pytest.skip("eval/realworld dev files not present")
    cases = realworld_dev_cases()
    assert len(cases) >= 160  # 111 of cases-a/b/d/e/g, 49 of cases-i/j/k/l
    assert {c["split"] for c in cases} == {"dev"}
    held_out = {"cases-c.jsonl", "cases-f.jsonl", "cases-h.jsonl", "cases-m.jsonl"}
    assert not held_out & {p.name for p in REALWORLD_DEV_FILES}
