"""Logs in the shapes services really send them: objects, JSON lines, plain text."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.logs import MAX_ENTRIES, MAX_MESSAGE, parse_logs

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=15), children, max_size=5)
    ),
    max_leaves=30,
)


def test_every_dev_log_line_becomes_one_entry_with_its_text():
    for line in DEV_CASES.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        entries = parse_logs(case["logs"])
        assert len(entries) == len(case["logs"]), case["id"]
        for entry, text in zip(entries, case["logs"], strict=True):
            assert entry["message"] in text


def test_plain_text_line_gives_timestamp_level_trace_id_and_error_code():
    [entry] = parse_logs(
        ["2024-05-01 12:00:01,123 ERROR [worker-3] CUDA OOM trace_id=4bf92f35 error_code=E1001"]
    )
    assert entry["ts"] == "2024-05-01T12:00:01.123000"
    assert entry["level"] == "ERROR"
    assert entry["message"] == "[worker-3] CUDA OOM trace_id=4bf92f35 error_code=E1001"
    assert (entry["trace_id"], entry["error_code"]) == ("4bf92f35", "E1001")


def test_json_lines_blob_uses_the_common_keys():
    blob = "\n".join(
        [
            json.dumps(
                {
                    "@timestamp": "2024-05-01T12:00:00Z",
                    "severity": "warn",
                    "msg": "slow batch",
                    "traceId": "abc123",
                    "gpu": 3,
                }
            ),
            json.dumps(
                {"time": 1714564800, "levelname": "ERROR", "message": "OOM", "errorCode": 507}
            ),
        ]
    )
    slow, oom = parse_logs(blob)
    assert slow == {
        "ts": "2024-05-01T12:00:00+00:00",
        "level": "WARNING",
        "message": "slow batch",
        "trace_id": "abc123",
        "error_code": None,
        "extra": {"gpu": 3},
    }
    assert oom["ts"] == "2024-05-01T12:00:00+00:00"
    assert (oom["level"], oom["error_code"]) == ("ERROR", "507")


def test_objects_with_snake_and_kebab_keys_are_recognised():
    [entry] = parse_logs(
        [{"ts": "not a time", "level": "fatal", "message": "boom", "trace-id": "t-1", "code": "X9"}]
    )
    assert entry["ts"] == "not a time"
    assert (entry["level"], entry["trace_id"], entry["error_code"]) == ("FATAL", "t-1", "X9")


def test_bracketed_timestamp_and_level_are_stripped_from_the_message():
    [entry] = parse_logs("[2024-05-01T12:00:02Z] [INFO] model loaded")
    assert (entry["ts"], entry["level"], entry["message"]) == (
        "2024-05-01T12:00:02+00:00",
        "INFO",
        "model loaded",
    )


def test_python_logging_default_format_gives_the_level():
    [entry] = parse_logs("WARNING:root:gradient overflow, skipping step")
    assert entry["level"] == "WARNING"


def test_indented_continuation_lines_stay_with_their_entry():
    blob = (
        "2024-05-01 12:00:00 ERROR step failed\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "RuntimeError: CUDA error\n"
    )
    entries = parse_logs(blob)
    assert len(entries) == 3
    assert entries[1]["message"].endswith('File "train.py", line 3, in <module>')


def test_only_the_most_recent_entries_are_kept():
    entries = parse_logs([f"line {n}" for n in range(MAX_ENTRIES + 20)])
    assert len(entries) == MAX_ENTRIES
    assert entries[-1]["message"] == f"line {MAX_ENTRIES + 19}"


def test_long_messages_are_truncated():
    [entry] = parse_logs(["x" * (MAX_MESSAGE * 3)])
    assert len(entry["message"]) == MAX_MESSAGE


def test_nothing_in_gives_nothing_out():
    assert parse_logs(None) == []
    assert parse_logs("") == []
    assert parse_logs([]) == []


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_parses_without_raising(text):
    for entry in parse_logs(text):
        assert isinstance(entry["message"], str)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_parses_without_raising(value):
    for entry in parse_logs(value):
        assert entry["level"] is None or entry["level"] == entry["level"].upper()
        assert isinstance(entry["extra"], dict)
