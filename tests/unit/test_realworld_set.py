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
SECOND_HOLDOUT = "cases-c.jsonl"
THIRD_HOLDOUT = "cases-f.jsonl"
FOURTH_HOLDOUT = "cases-h.jsonl"
FIFTH_HOLDOUT = "cases-m.jsonl"
SIXTH_HOLDOUT = "cases-q.jsonl"
SEVENTH_HOLDOUT = "cases-r.jsonl"
EIGHTH_HOLDOUT = "cases-v.jsonl"
NINTH_HOLDOUT = "cases-x.jsonl"
TENTH_HOLDOUT = "cases-z.jsonl"
ELEVENTH_HOLDOUT = "cases-ab.jsonl"
TWELFTH_HOLDOUT = "cases-ad.jsonl"
THIRTEENTH_HOLDOUT = "cases-af.jsonl"
FRESH_HOLDOUTS = {
    "holdout2",
    "holdout3",
    "holdout4",
    "holdout5",
    "holdout6",
    "holdout7",
    "holdout8",
    "holdout9",
    "holdout10",
    "holdout11",
    "holdout12",
    "holdout13",
}
SPLITS = {"dev", "holdout"} | FRESH_HOLDOUTS
# Framework groups of issue 16; the second to thirteenth holdouts cover each of them.
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


def test_the_second_holdout_is_its_own_file_and_covers_every_group():
    """cases-c.jsonl is a fresh holdout (issue 16): only `holdout2` lines, `rc` ids, and
    `holdout2` appears nowhere else, so it can be scored on its own (`rca eval --split`)."""
    if not (REALWORLD_DIR / SECOND_HOLDOUT).exists():
        pytest.skip(f"{SECOND_HOLDOUT} not present")
    second = [case for name, _, case in CASES if name == SECOND_HOLDOUT]
    assert len(second) >= 40
    assert all(case["split"] == "holdout2" for case in second)
    assert all(case["id"].startswith("rc") for case in second)
    elsewhere = [c["id"] for n, _, c in CASES if n != SECOND_HOLDOUT and c["split"] == "holdout2"]
    assert not elsewhere, f"holdout2 lines outside {SECOND_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in second) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 2}
    assert not thin, f"framework groups with fewer than 2 cases: {thin}"


def test_the_third_holdout_is_its_own_file_and_covers_every_group():
    """cases-f.jsonl is a third fresh holdout (issue 16), built like cases-c: only
    `holdout3` lines, `rf` ids, and `holdout3` appears nowhere else."""
    if not (REALWORLD_DIR / THIRD_HOLDOUT).exists():
        pytest.skip(f"{THIRD_HOLDOUT} not present")
    third = [case for name, _, case in CASES if name == THIRD_HOLDOUT]
    assert len(third) >= 50
    assert all(case["split"] == "holdout3" for case in third)
    assert all(case["id"].startswith("rf") for case in third)
    elsewhere = [c["id"] for n, _, c in CASES if n != THIRD_HOLDOUT and c["split"] == "holdout3"]
    assert not elsewhere, f"holdout3 lines outside {THIRD_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in third) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 2}
    assert not thin, f"framework groups with fewer than 2 cases: {thin}"


def test_the_fourth_holdout_is_its_own_file_and_covers_every_group():
    """cases-h.jsonl is a fourth fresh holdout (issue 16), built like cases-f: only
    `holdout4` lines, `rh` ids, and `holdout4` appears nowhere else."""
    if not (REALWORLD_DIR / FOURTH_HOLDOUT).exists():
        pytest.skip(f"{FOURTH_HOLDOUT} not present")
    fourth = [case for name, _, case in CASES if name == FOURTH_HOLDOUT]
    assert len(fourth) >= 50
    assert all(case["split"] == "holdout4" for case in fourth)
    assert all(case["id"].startswith("rh") for case in fourth)
    elsewhere = [c["id"] for n, _, c in CASES if n != FOURTH_HOLDOUT and c["split"] == "holdout4"]
    assert not elsewhere, f"holdout4 lines outside {FOURTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in fourth) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 2}
    assert not thin, f"framework groups with fewer than 2 cases: {thin}"


def test_the_fifth_holdout_is_its_own_file_and_covers_every_group():
    """cases-m.jsonl is a fifth fresh holdout (issue 16), built like cases-h: only
    `holdout5` lines, `rm` ids, and `holdout5` appears nowhere else."""
    if not (REALWORLD_DIR / FIFTH_HOLDOUT).exists():
        pytest.skip(f"{FIFTH_HOLDOUT} not present")
    fifth = [case for name, _, case in CASES if name == FIFTH_HOLDOUT]
    assert len(fifth) >= 45
    assert all(case["split"] == "holdout5" for case in fifth)
    assert all(case["id"].startswith("rm") for case in fifth)
    elsewhere = [c["id"] for n, _, c in CASES if n != FIFTH_HOLDOUT and c["split"] == "holdout5"]
    assert not elsewhere, f"holdout5 lines outside {FIFTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in fifth) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 2}
    assert not thin, f"framework groups with fewer than 2 cases: {thin}"


def test_the_sixth_holdout_is_its_own_file_and_covers_every_group():
    """cases-q.jsonl is a sixth fresh holdout (issue 16), built like cases-m: only
    `holdout6` lines, `rq` ids, and `holdout6` appears nowhere else."""
    if not (REALWORLD_DIR / SIXTH_HOLDOUT).exists():
        pytest.skip(f"{SIXTH_HOLDOUT} not present")
    sixth = [case for name, _, case in CASES if name == SIXTH_HOLDOUT]
    assert len(sixth) >= 45
    assert all(case["split"] == "holdout6" for case in sixth)
    assert all(case["id"].startswith("rq") for case in sixth)
    elsewhere = [c["id"] for n, _, c in CASES if n != SIXTH_HOLDOUT and c["split"] == "holdout6"]
    assert not elsewhere, f"holdout6 lines outside {SIXTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in sixth) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 2}
    assert not thin, f"framework groups with fewer than 2 cases: {thin}"


def test_the_seventh_holdout_is_its_own_file_and_covers_every_group():
    """cases-r.jsonl is a seventh fresh holdout (issue 16), built like cases-q: only
    `holdout7` lines, `rr` ids, and `holdout7` appears nowhere else."""
    if not (REALWORLD_DIR / SEVENTH_HOLDOUT).exists():
        pytest.skip(f"{SEVENTH_HOLDOUT} not present")
    seventh = [case for name, _, case in CASES if name == SEVENTH_HOLDOUT]
    assert len(seventh) >= 40
    assert all(case["split"] == "holdout7" for case in seventh)
    assert all(case["id"].startswith("rr") for case in seventh)
    elsewhere = [c["id"] for n, _, c in CASES if n != SEVENTH_HOLDOUT and c["split"] == "holdout7"]
    assert not elsewhere, f"holdout7 lines outside {SEVENTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in seventh) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 2}
    assert not thin, f"framework groups with fewer than 2 cases: {thin}"


def test_the_eighth_holdout_is_its_own_file_and_covers_every_group():
    """cases-v.jsonl is an eighth fresh holdout (issue 16), built like cases-r: only
    `holdout8` lines, `rv` ids, and `holdout8` appears nowhere else."""
    if not (REALWORLD_DIR / EIGHTH_HOLDOUT).exists():
        pytest.skip(f"{EIGHTH_HOLDOUT} not present")
    eighth = [case for name, _, case in CASES if name == EIGHTH_HOLDOUT]
    assert len(eighth) >= 42
    assert all(case["split"] == "holdout8" for case in eighth)
    assert all(case["id"].startswith("rv") for case in eighth)
    elsewhere = [c["id"] for n, _, c in CASES if n != EIGHTH_HOLDOUT and c["split"] == "holdout8"]
    assert not elsewhere, f"holdout8 lines outside {EIGHTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in eighth) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 3}
    assert not thin, f"framework groups with fewer than 3 cases: {thin}"


def test_the_ninth_holdout_is_its_own_file_and_covers_every_group():
    """cases-x.jsonl is a ninth fresh holdout (issue 16), built like cases-v: only
    `holdout9` lines, `rx` ids, and `holdout9` appears nowhere else."""
    if not (REALWORLD_DIR / NINTH_HOLDOUT).exists():
        pytest.skip(f"{NINTH_HOLDOUT} not present")
    ninth = [case for name, _, case in CASES if name == NINTH_HOLDOUT]
    assert len(ninth) >= 42
    assert all(case["split"] == "holdout9" for case in ninth)
    assert all(case["id"].startswith("rx") for case in ninth)
    elsewhere = [c["id"] for n, _, c in CASES if n != NINTH_HOLDOUT and c["split"] == "holdout9"]
    assert not elsewhere, f"holdout9 lines outside {NINTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in ninth) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 3}
    assert not thin, f"framework groups with fewer than 3 cases: {thin}"


def test_the_tenth_holdout_is_its_own_file_and_covers_every_group():
    """cases-z.jsonl is a tenth fresh holdout (issue 16), built like cases-x: only
    `holdout10` lines, `rz` ids, and `holdout10` appears nowhere else."""
    if not (REALWORLD_DIR / TENTH_HOLDOUT).exists():
        pytest.skip(f"{TENTH_HOLDOUT} not present")
    tenth = [case for name, _, case in CASES if name == TENTH_HOLDOUT]
    assert len(tenth) >= 42
    assert all(case["split"] == "holdout10" for case in tenth)
    assert all(case["id"].startswith("rz") for case in tenth)
    elsewhere = [c["id"] for n, _, c in CASES if n != TENTH_HOLDOUT and c["split"] == "holdout10"]
    assert not elsewhere, f"holdout10 lines outside {TENTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in tenth) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 3}
    assert not thin, f"framework groups with fewer than 3 cases: {thin}"


def test_the_eleventh_holdout_is_its_own_file_and_covers_every_group():
    """cases-ab.jsonl is an eleventh fresh holdout (issue 16), built like cases-z: only
    `holdout11` lines, `rab` ids, and `holdout11` appears nowhere else."""
    if not (REALWORLD_DIR / ELEVENTH_HOLDOUT).exists():
        pytest.skip(f"{ELEVENTH_HOLDOUT} not present")
    eleventh = [case for name, _, case in CASES if name == ELEVENTH_HOLDOUT]
    assert len(eleventh) >= 44
    assert all(case["split"] == "holdout11" for case in eleventh)
    assert all(case["id"].startswith("rab") for case in eleventh)
    elsewhere = [
        c["id"] for n, _, c in CASES if n != ELEVENTH_HOLDOUT and c["split"] == "holdout11"
    ]
    assert not elsewhere, f"holdout11 lines outside {ELEVENTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in eleventh) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 3}
    assert not thin, f"framework groups with fewer than 3 cases: {thin}"


def test_the_twelfth_holdout_is_its_own_file_and_covers_every_group():
    """cases-ad.jsonl is a twelfth fresh holdout (issue 16), built like cases-ab: only
    `holdout12` lines, `rad` ids, and `holdout12` appears nowhere else."""
    if not (REALWORLD_DIR / TWELFTH_HOLDOUT).exists():
        pytest.skip(f"{TWELFTH_HOLDOUT} not present")
    twelfth = [case for name, _, case in CASES if name == TWELFTH_HOLDOUT]
    assert len(twelfth) >= 44
    assert all(case["split"] == "holdout12" for case in twelfth)
    assert all(case["id"].startswith("rad") for case in twelfth)
    elsewhere = [c["id"] for n, _, c in CASES if n != TWELFTH_HOLDOUT and c["split"] == "holdout12"]
    assert not elsewhere, f"holdout12 lines outside {TWELFTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in twelfth) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 3}
    assert not thin, f"framework groups with fewer than 3 cases: {thin}"


def test_the_thirteenth_holdout_is_its_own_file_and_covers_every_group():
    """cases-af.jsonl is a thirteenth fresh holdout (issue 16), built like cases-ad but from
    Q&A and troubleshooting pages: only `holdout13` lines, `raf` ids, and `holdout13`
    appears nowhere else."""
    if not (REALWORLD_DIR / THIRTEENTH_HOLDOUT).exists():
        pytest.skip(f"{THIRTEENTH_HOLDOUT} not present")
    thirteenth = [case for name, _, case in CASES if name == THIRTEENTH_HOLDOUT]
    assert len(thirteenth) >= 44
    assert all(case["split"] == "holdout13" for case in thirteenth)
    assert all(case["id"].startswith("raf") for case in thirteenth)
    elsewhere = [
        c["id"] for n, _, c in CASES if n != THIRTEENTH_HOLDOUT and c["split"] == "holdout13"
    ]
    assert not elsewhere, f"holdout13 lines outside {THIRTEENTH_HOLDOUT}: {elsewhere}"
    per_group = {g: sum(c["framework"] in fws for c in thirteenth) for g, fws in GROUPS.items()}
    thin = {g: n for g, n in per_group.items() if n < 3}
    assert not thin, f"framework groups with fewer than 3 cases: {thin}"
