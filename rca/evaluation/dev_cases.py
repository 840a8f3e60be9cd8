"""The dev incidents by id (never a holdout split), for tests and the validation-probe scorer."""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["SOURCES", "dev_case", "dev_cases"]

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (
    ROOT / "tests" / "data" / "dev_cases.jsonl",
    ROOT / "eval" / "realworld" / "cases-a.jsonl",
    ROOT / "eval" / "realworld" / "cases-b.jsonl",
    ROOT / "eval" / "realworld" / "cases-d.jsonl",
    ROOT / "eval" / "realworld" / "cases-e.jsonl",
    ROOT / "eval" / "realworld" / "cases-g.jsonl",
    ROOT / "eval" / "realworld" / "cases-i.jsonl",
    ROOT / "eval" / "realworld" / "cases-j.jsonl",
    ROOT / "eval" / "realworld" / "cases-k.jsonl",
    ROOT / "eval" / "realworld" / "cases-l.jsonl",
    ROOT / "eval" / "realworld" / "cases-n.jsonl",
    ROOT / "eval" / "realworld" / "cases-o.jsonl",
    ROOT / "eval" / "realworld" / "cases-p.jsonl",
    ROOT / "eval" / "realworld" / "cases-s.jsonl",
    ROOT / "eval" / "realworld" / "cases-t.jsonl",
    ROOT / "eval" / "realworld" / "cases-u.jsonl",
    ROOT / "eval" / "realworld" / "cases-w.jsonl",
)


@lru_cache(maxsize=1)
def dev_cases() -> tuple[dict[str, Any], ...]:
    """Every dev case: the bundled dev set and the real-world set's ``dev`` split."""
    cases = []
    for path in SOURCES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case.get("split", "dev") == "dev":
                    cases.append(case)
    return tuple(cases)


def dev_case(case_id: str) -> dict[str, Any]:
    """One dev case by id: from :func:`dev_cases`, else from every real-world dev file the
    evaluation reads (``rca eval --realworld-dev``), which :data:`SOURCES` lists only in part
    (the metamorphic tests iterate :func:`dev_cases`, and their known-inconsistency list was
    written for it)."""
    try:
        return copy.deepcopy(_by_id()[case_id])  # callers may edit their copy
    except KeyError:
        raise LookupError(f"{case_id} is not a dev case") from None


@lru_cache(maxsize=1)
def _by_id() -> dict[str, dict[str, Any]]:
    """Id -> dev case; the first of :func:`dev_cases` and then the real-world dev files wins."""
    from rca.evaluation.suite import realworld_dev_cases

    found: dict[str, dict[str, Any]] = {}
    for case in (*dev_cases(), *realworld_dev_cases()):
        found.setdefault(str(case["id"]), case)
    return found
