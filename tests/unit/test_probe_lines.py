"""Reading validation probe lines: their incident, their half, and errors that name the line."""

from __future__ import annotations

import hashlib
import json

import pytest

from rca.evaluation.probe_lines import ProbeError, parse_line


def _line(**fields: object) -> str:
    return json.dumps({"action": "Lower max_model_len to 7000.", "label": "right", **fields})


def test_a_fresh_probe_line_is_halved_by_the_hash_of_its_case_id() -> None:
    line = parse_line(3, _line(case_id="rb001"), sha1_halves=True)
    first = hashlib.sha1(b"rb001", usedforsecurity=False).hexdigest()[0]
    assert line.half == ("tune" if first in "01234567" else "hold")
    assert line.key == "rb001" and line.incident["id"] == "rb001"
    assert parse_line(3, _line(case_id="rb001")).half == "all"


def test_a_line_with_its_own_message_is_its_own_incident() -> None:
    message = "This model's maximum context length is 4096 tokens."
    line = parse_line(7, _line(message=message, logs=[], half="hold", slug="x"))
    assert line.half == "hold" and line.slug == "x"
    assert line.incident["message"] == message
    same = parse_line(8, _line(message=message, logs=[], half="tune"))
    assert same.key == line.key  # one retrieval for both


def test_a_size_limits_line_names_its_case_by_case() -> None:
    assert parse_line(1, _line(case="rb001", half="tune")).incident["id"] == "rb001"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{not json", "line 4: not a JSON object"),
        (json.dumps({"case_id": "rb001", "label": "right"}), "line 4: field 'action'"),
        (_line(), "line 4: field 'case_id' (or 'case', or 'message') is missing"),
        (_line(case_id="rb001", logs="x", message="m"), "line 4: field 'logs'"),
    ],
)
def test_a_bad_line_names_its_number_and_field(text: str, error: str) -> None:
    with pytest.raises(ProbeError) as raised:
        parse_line(4, text)
    assert error in str(raised.value)
