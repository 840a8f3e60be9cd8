"""Python tracebacks: real ones from the dev set, chains, and the mess real logs contain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.parsing.python_traceback import module_from_path, parse_python_traceback

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


def dev_case(case_id: str) -> dict:
    for line in DEV_CASES.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["id"] == case_id:
            return case
    raise KeyError(case_id)


CHAINED = """\
2024-05-01 12:00:00 ERROR worker crashed
Traceback (most recent call last):
  File "/srv/app/loader.py", line 10, in load
    return torch.load(path)
  File "/usr/lib/python3.11/site-packages/torch/serialization.py", line 1025, in load
    raise pickle.UnpicklingError(msg)
_pickle.UnpicklingError: invalid load key, 'v'.

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/srv/app/loader.py", line 14, in load
    log.warning("bad file %s", pathh)
            ^^^^^
NameError: name 'pathh' is not defined

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/app/main.py", line 3, in <module>
    main()
  File "/srv/app/main.py", line 2, in main
    load("model.pt")
  File "/srv/app/loader.py", line 16, in load
    raise ModelLoadError("could not load model.pt")
app.errors.ModelLoadError: could not load model.pt
"""


def test_chained_traceback_lists_root_cause_first_and_final_exception_last():
    exceptions = parse_python_traceback(CHAINED)
    assert [e["type"] for e in exceptions] == [
        "_pickle.UnpicklingError",
        "NameError",
        "app.errors.ModelLoadError",
    ]
    assert [e["relation"] for e in exceptions] == [None, "context", "cause"]


def test_frames_run_from_caller_to_callee_without_line_numbers_lost():
    final = parse_python_traceback(CHAINED)[-1]
    assert [(f["function"], f["lineno"]) for f in final["frames"]] == [
        ("<module>", 3),
        ("main", 2),
        ("load", 16),
    ]
    assert final["frames"][-1]["context_line"] == 'raise ModelLoadError("could not load model.pt")'


def test_caret_markers_are_not_mistaken_for_code_or_exceptions():
    name_error = parse_python_traceback(CHAINED)[1]
    assert name_error["frames"][0]["context_line"] == 'log.warning("bad file %s", pathh)'
    assert name_error["message"] == "name 'pathh' is not defined"


def test_library_frames_are_not_in_app_and_get_a_module_name():
    frames = parse_python_traceback(CHAINED)[0]["frames"]
    assert [f["in_app"] for f in frames] == [True, False]
    assert frames[1]["module"] == "torch.serialization"


def test_real_traceback_without_header_keeps_all_frames_and_the_exception():
    case = dev_case("c032")
    [exception] = parse_python_traceback(case["traceback"])
    assert exception["type"] == "RuntimeError"
    assert exception["message"].startswith("Expected all tensors to be on the same device")
    assert len(exception["frames"]) == 5
    assert exception["frames"][-1]["function"] == "_sample"
    assert exception["frames"][-1]["module"] == "transformers.generation.utils"
    in_app = [f["function"] for f in exception["frames"] if f["in_app"]]
    assert in_app == ["generate"]


def test_real_traceback_with_header_finds_user_and_library_frames():
    [exception] = parse_python_traceback(dev_case("c047")["traceback"])
    assert exception["type"] == "RuntimeError"
    assert "size of tensor a (2545)" in exception["message"]
    assert exception["frames"][0] == {
        "filename": "/root/SoftMaskedBert.py",
        "function": "<module>",
        "lineno": 38,
        "module": "",
        "in_app": True,
        "context_line": "raise e",
    }
    assert exception["frames"][-1]["context_line"] == "embeddings += position_embeddings"
    assert not exception["frames"][-1]["in_app"]


def test_autograd_anomaly_forward_trace_gives_frames_without_an_exception():
    [forward] = parse_python_traceback(dev_case("c045")["traceback"])
    assert forward["type"] == ""
    assert forward["frames"][-1]["function"] == "distance_matrix_vector"
    assert all(frame["in_app"] for frame in forward["frames"])


def test_bare_exception_line_after_a_raise_statement_is_found():
    [exception] = parse_python_traceback(dev_case("c067")["traceback"])
    assert exception["type"] == "RuntimeError"
    assert exception["message"] == "DataLoader worker (pid(s) 15927) exited unexpectedly"
    assert exception["frames"] == []


def test_multi_line_message_is_kept_whole():
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 5, in <module>\n'
        "    model.load_state_dict(sd)\n"
        "RuntimeError: Error(s) in loading state_dict for Net:\n"
        "\tsize mismatch for fc.weight: copying a param with shape torch.Size([10, 512]) "
        "from checkpoint, the shape in current model is torch.Size([2, 512]).\n"
    )
    [exception] = parse_python_traceback(text)
    assert exception["message"].splitlines()[0] == "Error(s) in loading state_dict for Net:"
    assert "size mismatch for fc.weight" in exception["message"]


def test_recursion_marker_and_rank_prefixes_are_skipped():
    text = (
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/w/rec.py", line 2, in f\n'
        "[rank0]:     return f(n + 1)\n"
        "[rank0]:   [Previous line repeated 996 more times]\n"
        "[rank0]: RecursionError: maximum recursion depth exceeded\n"
    )
    [exception] = parse_python_traceback(text)
    assert exception["type"] == "RecursionError"
    assert [f["function"] for f in exception["frames"]] == ["f"]


def test_truncated_traceback_keeps_the_frames_it_has():
    text = 'Traceback (most recent call last):\n  File "/a/b.py", line 7, in run\n    x = y['
    [exception] = parse_python_traceback(text)
    assert exception["type"] == ""
    assert exception["frames"][0]["lineno"] == 7


def test_exception_without_message_is_parsed():
    text = 'Traceback (most recent call last):\n  File "a.py", line 1, in f\nKeyboardInterrupt\n'
    [exception] = parse_python_traceback(text)
    assert (exception["type"], exception["message"]) == ("KeyboardInterrupt", "")


@pytest.mark.parametrize("text", ["", "hello world", "Killed", "\n\n\n", "%%%: ###"])
def test_text_without_a_traceback_gives_nothing(text):
    assert parse_python_traceback(text) == []


@pytest.mark.parametrize(
    ("path", "module"),
    [
        (
            "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py",
            "torch.nn.modules.module",
        ),
        ("/usr/lib/python3/dist-packages/numpy/__init__.py", "numpy"),
        ("/home/me/train.py", ""),
        (
            "C:\\Py\\Lib\\site-packages\\transformers\\pipelines\\base.py",
            "transformers.pipelines.base",
        ),
    ],
)
def test_module_name_is_derived_only_from_installed_package_paths(path, module):
    assert module_from_path(path) == module
