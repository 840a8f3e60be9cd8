"""`manage.py rca eval --validation-probe FILE`: validation scored on labelled answers.

A tiny probe over dev case rb001 (vLLM: "The model's max seq len (32768) is larger than the
maximum number of tokens that can be stored in KV cache (7344)"): lowering max_model_len
below the cap is right; raising it past the stated maximum is harmful and validation rejects it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pytest_django import DjangoDbBlocker

from tests.support.corpus import store_embedded_runbooks

RIGHT = {
    "case_id": "rb001",
    "action": "Lower max_model_len to 7000 when initializing the engine.",
    "reason": "Only 7344 tokens fit in the KV cache.",
    "label": "right",
}
HARMFUL = {
    "case_id": "rb001",
    "action": "Raise max_model_len to 65536 so longer prompts fit.",
    "reason": "More context avoids truncation.",
    "label": "harmful",
}


@pytest.fixture(scope="module")
def stored_corpus(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> None:
    """The bundled runbooks stored and embedded, as for the other `rca eval` tests."""
    with django_db_blocker.unblock():
        store_embedded_runbooks()


def _probe(tmp_path: Path, *lines: dict[str, Any]) -> Path:
    path = tmp_path / "probe.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _run(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("rca", "eval", "--validation-probe", str(path), *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_a_right_answer_passes_and_a_harmful_one_fails(stored_corpus: None, tmp_path: Path) -> None:
    harmless = {**RIGHT, "label": "harmless-wrong"}
    report = json.loads(_run(_probe(tmp_path, RIGHT, HARMFUL, harmless), "--json", "-V"))
    assert report["halves"] == {
        "all": {
            "scored": 2,
            "verdicts_right": 2,
            "harmful": 1,
            "harmful_passing": 0,
            "right_or_partly": 1,
            "right_rejected": 0,
            "harmless_wrong_pass": 1,
            "harmless_wrong_fail": 0,
        }
    }
    lines = {row["line"]: row for row in report["lines"]}
    assert lines[1]["ok"] and not lines[2]["ok"] and lines[2]["complaints"]
    assert lines[1]["runbook"]  # the offline provider's runbook, cited for want of a slug


@pytest.mark.django_db
def test_the_hold_half_prints_aggregates_only_even_when_verbose(
    stored_corpus: None, tmp_path: Path
) -> None:
    probe = _probe(tmp_path, {**RIGHT, "half": "hold"}, {**HARMFUL, "half": "hold"})
    for args in (("--half", "hold", "-V"), ("-V",)):
        text = _run(probe, *args)
        assert "line " not in text and "hold: 2 scored, 2 verdicts right" in text
        report = json.loads(_run(probe, *args, "--json"))
        assert report["lines"] == [] and report["halves"]["hold"]["verdicts_right"] == 2
    tune = _run(_probe(tmp_path, {**RIGHT, "half": "tune"}, {**HARMFUL, "half": "hold"}), "-V")
    assert "line 1 right: ok=True" in tune and "line 2" not in tune


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ({k: v for k, v in RIGHT.items() if k != "label"}, "line 2: field 'label'"),
        ({**RIGHT, "label": "fine"}, "line 2: field 'label' is 'fine'"),
        ({**RIGHT, "case_id": "no-such-case"}, "line 2: field 'case_id': 'no-such-case'"),
        ({**RIGHT, "half": "later"}, "line 2: field 'half'"),
    ],
)
def test_a_bad_line_is_named_with_its_field(
    tmp_path: Path, line: dict[str, Any], error: str
) -> None:
    with pytest.raises(CommandError, match=error):
        _run(_probe(tmp_path, RIGHT, line))
