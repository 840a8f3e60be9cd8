"""The real-world evaluation set (eval/realworld/*.jsonl) is well formed.

Every case must carry what issue 16 asks of it (source link, the error as posted, the
fix in our own words, key terms) and the set must stay usable for scoring: ids and
threads are unique across files, and every framework has both a dev and a holdout case
so holdout figures exist per framework.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

REALWORLD_DIR = Path(__file__).resolve().parents[2] / "eval" / "realworld"
DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"
BOTH_FILES = ("cases-a.jsonl", "cases-b.jsonl")
# The fresh holdouts of issue 16, each a file of its own: (file, split, id prefix, at least
# this many cases, at least this many in every framework group). Each was collected after the
# one before, by a collector who ran no engine on it; later ones from other kinds of page
# (Q&A, troubleshooting); holdout14 (cases-al) is the first of 30 cases, three per group.
FRESH_FILES = (
    ("cases-c.jsonl", "holdout2", "rc", 40, 2),
    ("cases-f.jsonl", "holdout3", "rf", 50, 2),
    ("cases-h.jsonl", "holdout4", "rh", 50, 2),
    ("cases-m.jsonl", "holdout5", "rm", 45, 2),
    ("cases-q.jsonl", "holdout6", "rq", 45, 2),
    ("cases-r.jsonl", "holdout7", "rr", 40, 2),
    ("cases-v.jsonl", "holdout8", "rv", 42, 3),
    ("cases-x.jsonl", "holdout9", "rx", 42, 3),
    ("cases-z.jsonl", "holdout10", "rz", 42, 3),
    ("cases-ab.jsonl", "holdout11", "rab", 44, 3),
    ("cases-ad.jsonl", "holdout12", "rad", 44, 3),
    ("cases-af.jsonl", "holdout13", "raf", 44, 3),
    ("cases-al.jsonl", "holdout14", "ral", 30, 3),
    ("cases-ao.jsonl", "holdout15", "rao", 30, 3),
    ("cases-at.jsonl", "holdout16", "rat", 30, 3),
)
FRESH_HOLDOUTS = {split for _, split, _, _, _ in FRESH_FILES}
SPLITS = {"dev", "holdout"} | FRESH_HOLDOUTS
# Framework groups of issue 16; every fresh holdout covers each of them.
GROUPS = {
    "pytorch": {"pytorch"},
    "tf/keras": {"tensorflow", "keras"},
    "jax": {"jax"},
    "transformers": {"transformers"},
    "vllm/tgi": {"vllm", "tgi"},
    "triton": {"triton"},
    "tensorrt": {"tensorrt"},
    "onnxruntime": {"onnxruntime"},
    "deepspeed/fsdp": {"deepspeed", "fsdp"},
    "bitsandbytes/peft": {"bitsandbytes", "peft"},
}

REQUIRED = {
    "id": str,
    "category": str,
    "framework": str,
    "source": str,
    "source_url": str,
    "exception_type": str,
    "message": str,
    "traceback": str,
    "logs": list,
    "fix_action": str,
    "fix_reason": str,
    "keywords": list,
    "split": str,
}
GITHUB_SOURCE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+#\d+$")
LOWER_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


def load_cases() -> list[tuple[str, int, dict]]:
    """(file name, line number, case) for every line of every set file."""
    rows = []
    for path in sorted(REALWORLD_DIR.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                rows.append((path.name, number, json.loads(line)))
    return rows


CASES = load_cases()


def where(name: str, number: int, case: dict) -> str:
    return f"{name}:{number} ({case.get('id')})"


def test_the_set_has_cases():
    assert CASES, f"no cases under {REALWORLD_DIR}"


def test_the_set_reaches_100_cases_once_both_files_are_there():
    present = [name for name in BOTH_FILES if (REALWORLD_DIR / name).exists()]
    if len(present) < len(BOTH_FILES):
        pytest.skip(f"only {present} present; the 100-case floor applies to both files")
    assert len(CASES) >= 100


@pytest.mark.parametrize(
    ("name", "number", "case"), CASES, ids=[case.get("id", "?") for _, _, case in CASES]
)
def test_every_case_has_the_required_fields_in_form(name, number, case):
    at = where(name, number, case)
    for field, kind in REQUIRED.items():
        assert isinstance(case.get(field), kind), f"{at}: {field} missing or not {kind.__name__}"
    assert "shapes" in case, f"{at}: shapes missing (null when nothing is mismatched)"
    if case["shapes"] is not None:
        assert set(case["shapes"]) == {"expected", "actual", "tensor"}, f"{at}: shapes keys"
    assert case["exception_type"].strip(), f"{at}: empty exception_type"
    assert case["split"] in SPLITS, f"{at}: split {case['split']!r}"
    assert case["message"].strip(), f"{at}: empty message"
    assert LOWER_ID.match(case["category"]), f"{at}: category must be a lowercase id"
    assert LOWER_ID.match(case["framework"]), f"{at}: framework must be lowercase"
    assert case["source_url"].startswith("https://"), f"{at}: source_url must be https"
    source = case["source"]
    assert GITHUB_SOURCE.match(source) or source.startswith("https://"), (
        f"{at}: source must be owner/repo#number or a page URL"
    )
    assert len(case["fix_action"].split()) <= 15, f"{at}: fix_action over 15 words"
    assert len(case["fix_reason"].split()) <= 25, f"{at}: fix_reason over 25 words"
    assert len(case["traceback"].splitlines()) <= 40, f"{at}: traceback over 40 lines"
    assert len(case["logs"]) <= 5, f"{at}: more than 5 log lines"
    keywords = case["keywords"]
    assert 2 <= len(keywords) <= 5, f"{at}: keywords must be 2-5 terms"
    for term in keywords:
        assert isinstance(term, str) and term.strip(), f"{at}: empty keyword"
        assert term == term.lower(), f"{at}: keyword {term!r} not lowercase"


def test_github_sources_match_their_urls():
    for name, number, case in CASES:
        match = GITHUB_SOURCE.match(case["source"])
        if match:
            repo, thread = case["source"].split("#")
            url = case["source_url"].lower()
            at = where(name, number, case)
            assert url.startswith(f"https://github.com/{repo.lower()}/"), at
            assert re.search(rf"/(issues|pull|discussions)/{thread}\b", url), at


def test_ids_and_sources_are_unique_across_files():
    seen_ids: dict[str, str] = {}
    seen_sources: dict[str, str] = {}
    for name, number, case in CASES:
        at = where(name, number, case)
        assert case["id"] not in seen_ids, f"{at}: id also at {seen_ids[case['id']]}"
        seen_ids[case["id"]] = at
        source = case["source"].lower()
        assert source not in seen_sources, f"{at}: thread also used at {seen_sources[source]}"
        seen_sources[source] = at


def test_no_thread_of_the_development_cases_is_reused():
    dev_sources = {
        json.loads(line)["source"].lower()
        for line in DEV_CASES.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    reused = [case["id"] for _, _, case in CASES if case["source"].lower() in dev_sources]
    assert not reused, f"threads of tests/data/dev_cases.jsonl reused by {reused}"


def test_every_framework_has_dev_and_holdout_cases():
    splits: dict[str, set[str]] = defaultdict(set)
    for _, _, case in CASES:
        if case["split"] not in FRESH_HOLDOUTS:
            splits[case["framework"]].add(case["split"])
    lacking = {fw: sorted(s) for fw, s in splits.items() if s != {"dev", "holdout"}}
    assert not lacking, f"frameworks without both splits: {lacking}"


@pytest.mark.parametrize(("file", "split", "prefix", "at_least", "per_group"), FRESH_FILES)
def test_each_fresh_holdout_is_its_own_file_and_covers_every_group(
    file, split, prefix, at_least, per_group
):
    """A fresh holdout (issue 16) holds only its own split's lines, with its own id prefix,
    and its split appears nowhere else, so it can be scored on its own (`rca eval --split`);
    every framework group has cases in it."""
    if not (REALWORLD_DIR / file).exists():
        pytest.skip(f"{file} not present")
    cases = [case for name, _, case in CASES if name == file]
    assert len(cases) >= at_least
    assert all(case["split"] == split for case in cases)
    assert all(case["id"].startswith(prefix) for case in cases)
    elsewhere = [c["id"] for n, _, c in CASES if n != file and c["split"] == split]
    assert not elsewhere, f"{split} lines outside {file}: {elsewhere}"
    counts = {g: sum(c["framework"] in fws for c in cases) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in counts.items() if n < per_group}
    assert not thin, f"framework groups with fewer than {per_group} cases: {thin}"
