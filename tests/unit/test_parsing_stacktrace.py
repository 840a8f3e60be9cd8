"""The stacktrace entry point: dispatch by input kind, JSON frames, and never raising."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.frames import frames_from_json, is_in_app
from ingest.parsing.stacktrace import parse_stacktrace

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"
SHARED_DEV_CASES = Path(__file__).resolve().parents[3] / "shared" / "eval" / "dev_cases.jsonl"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=15), children, max_size=5)
    ),
    max_leaves=30,
)
frame_keys = st.sampled_from(
    [
        "filename",
        "fileName",
        "function",
        "methodName",
        "lineno",
        "lineNumber",
        "line",
        "module",
        "className",
        "in_app",
        "inApp",
        "context_line",
        "contextLine",
        "abs_path",
    ]
)
frame_like = st.dictionaries(frame_keys, json_values, max_size=8)


def dev_cases() -> list[dict]:
    return [json.loads(line) for line in DEV_CASES.read_text(encoding="utf-8").splitlines()]


@pytest.mark.skipif(not SHARED_DEV_CASES.exists(), reason="shared eval set not checked out")
def test_bundled_dev_cases_match_the_shared_eval_set():
    assert DEV_CASES.read_bytes() == SHARED_DEV_CASES.read_bytes()


def test_every_dev_traceback_parses_and_ends_with_the_reported_exception_type():
    for case in dev_cases():
        exceptions = parse_stacktrace(case["traceback"])
        if not case["traceback"]:
            assert exceptions == []
            continue
        assert exceptions, case["id"]
        final = exceptions[-1]
        if final["type"]:
            assert final["type"] == case["exception_type"], case["id"]


def test_python_text_is_dispatched_to_the_python_parser():
    text = 'Traceback (most recent call last):\n  File "t.py", line 1, in <module>\nValueError: x'
    assert parse_stacktrace(text)[0]["type"] == "ValueError"


def test_jvm_text_is_dispatched_to_the_java_parser():
    text = "java.lang.IllegalStateException: boom\n\tat com.x.A.b(A.java:3)\n"
    [exception] = parse_stacktrace(text)
    assert exception["frames"][0]["filename"] == "A.java"


def test_list_of_frames_becomes_one_exception_without_type():
    frames = [
        {"filename": "/srv/app/train.py", "function": "step", "lineno": 10},
        {
            "fileName": "Predictor.java",
            "methodName": "run",
            "lineNumber": "7",
            "className": "com.x.Predictor",
        },
    ]
    [exception] = parse_stacktrace(frames)
    assert (exception["type"], exception["message"], exception["relation"]) == ("", "", None)
    assert [f["lineno"] for f in exception["frames"]] == [10, 7]
    assert exception["frames"][1]["module"] == "com.x.Predictor"


def test_json_frames_tolerate_odd_fields_and_keep_sent_in_app_flags():
    frames = frames_from_json(
        [
            "not a frame",
            {},
            {
                "filename": "/venv/lib/python3.11/site-packages/torch/x.py",
                "function": "f",
                "lineno": "n/a",
                "in_app": True,
            },
            {"function": "g", "line": "    y = g(x)", "inApp": "false"},
            {"filename": ["weird"], "function": {"nested": 1}, "module": "m", "lineno": -3},
        ]
    )
    assert len(frames) == 3
    assert frames[0]["lineno"] is None and frames[0]["in_app"] is True
    assert frames[1]["context_line"] == "y = g(x)" and frames[1]["in_app"] is False
    assert frames[2] == {
        "filename": "",
        "function": "",
        "lineno": None,
        "module": "m",
        "in_app": True,
        "context_line": "",
    }


@pytest.mark.parametrize(
    ("filename", "module", "in_app"),
    [
        ("/home/me/project/train.py", "", True),
        ("/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", "", False),
        ("/usr/lib/python3/dist-packages/yaml/__init__.py", "", False),
        ("/usr/lib/python3.11/threading.py", "", False),
        ("/root/miniconda3/envs/x/lib/python3.9/multiprocessing/process.py", "", False),
        ("<frozen importlib._bootstrap>", "", False),
        ("Thread.java", "java.lang.Thread", False),
        ("", "javax.servlet.http.HttpServlet", False),
        ("", "jdk.internal.reflect.NativeMethodAccessorImpl", False),
        ("", "sun.reflect.GeneratedMethodAccessor", False),
        ("Predictor.java", "com.example.Predictor", True),
        ("C:\\Users\\me\\app\\main.py", "", True),
    ],
)
def test_library_and_runtime_frames_are_not_in_app(filename, module, in_app):
    assert is_in_app(filename, module) is in_app


def test_non_ascii_digits_and_huge_line_numbers_do_not_become_line_numbers():
    frames = frames_from_json(
        [{"function": "f", "lineno": "²"}, {"function": "g", "lineno": "9" * 5000}]
    )
    assert [f["lineno"] for f in frames] == [None, None]


@pytest.mark.parametrize("value", [None, "", 0, 3.5, {"a": 1}, b"bytes", [], [None, 1, "x"]])
def test_unusable_input_gives_an_empty_list(value):
    assert parse_stacktrace(value) == []


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_parses_without_raising(text):
    result = parse_stacktrace(text)
    assert isinstance(result, list)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Traceback (most recent call last):",
                '  File "/a/b.py", line 3, in f',
                "    x = 1",
                "    ^^^^",
                "ValueError: bad",
                "During handling of the above exception, another exception occurred:",
                "The above exception was the direct cause of the following exception:",
                "Caused by: java.io.IOException: x",
                "\tat a.b.C.d(C.java:1)",
                "\t... 3 more",
                "\tSuppressed: java.lang.Exception",
                "",
                "  [Previous line repeated 5 more times]",
            ]
        )
        | st.text(max_size=40),
        max_size=40,
    )
)
def test_any_mix_of_traceback_lines_parses_into_well_formed_exceptions(lines):
    for exception in parse_stacktrace("\n".join(lines)):
        assert set(exception) == {"type", "message", "frames", "relation"}
        assert exception["relation"] in (None, "cause", "context")
        for frame in exception["frames"]:
            assert isinstance(frame["in_app"], bool)
            assert frame["lineno"] is None or isinstance(frame["lineno"], int)


@settings(max_examples=300, deadline=None)
@given(st.lists(frame_like | json_values, max_size=10) | json_values)
def test_any_json_value_parses_without_raising(value):
    assert isinstance(parse_stacktrace(value), list)
