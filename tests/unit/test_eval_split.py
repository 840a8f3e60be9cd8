"""`rca eval --split NAME` scores only the cases of one split (`select_split` in the command).

The real-world set keeps a second, fresh holdout in eval/realworld/cases-c.jsonl
(`split: holdout2`), scored on its own with `--split holdout2`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rca.evaluation.run import load_cases
from rca.management.commands.rca import select_split

REALWORLD = Path(__file__).resolve().parents[2] / "eval" / "realworld"


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    rows = [{"id": "d1", "split": "dev"}, {"id": "h1", "split": "holdout2"}, {"id": "x"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")
    return path


def test_without_a_split_every_case_is_loaded(tmp_path: Path) -> None:
    assert [c["id"] for c in select_split(load_cases(_write(tmp_path)), None)] == [
        "d1",
        "h1",
        "x",
    ]


def test_a_split_keeps_only_its_cases(tmp_path: Path) -> None:
    assert [c["id"] for c in select_split(load_cases(_write(tmp_path)), "holdout2")] == ["h1"]


def test_an_unknown_split_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no case"):
        select_split(load_cases(_write(tmp_path)), "holdout9")


def test_the_second_holdout_loads_as_its_own_split() -> None:
    path = REALWORLD / "cases-c.jsonl"
    if not path.exists():
        pytest.skip("cases-c.jsonl not present")
    assert len(select_split(load_cases(path), "holdout2")) == len(load_cases(path)) >= 40
