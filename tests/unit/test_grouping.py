"""Grouping: one issue per bug, whatever the run's batch size, GPU, dtype or checkout path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.grouping import culprit, fingerprint, issue_title, normalise_message
from ingest.parsing.stacktrace import parse_stacktrace

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


def dev_cases() -> list[dict]:
    return [json.loads(line) for line in DEV_CASES.read_text(encoding="utf-8").splitlines()]


def traceback_for(root: str, lineno: int = 10) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "{root}/train.py", line {lineno}, in <module>\n'
        "    main()\n"
        f'  File "{root}/model.py", line {lineno + 20}, in forward\n'
        "    return self.fc(x)\n"
        '  File "/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 116, in f\n'
        "    return F.linear(input, self.weight, self.bias)\n"
    )


def frames_of(text: str) -> list:
    return parse_stacktrace(text)[-1]["frames"]


def test_same_bug_at_other_batch_size_has_same_fingerprint():
    frames = frames_of(traceback_for("/srv/app"))
    first = fingerprint(
        "RuntimeError", frames, "mat1 and mat2 shapes cannot be multiplied (256x4096 and 768x320)"
    )
    second = fingerprint(
        "RuntimeError", frames, "mat1 and mat2 shapes cannot be multiplied (8x4096 and 768x320)"
    )
    assert first == second


def test_same_oom_on_another_gpu_and_allocation_has_same_fingerprint():
    first = fingerprint(
        "torch.OutOfMemoryError",
        [],
        "CUDA out of memory. Tried to allocate 16.00 MiB (GPU 0; 39.59 GiB total "
        "capacity; 666.60 MiB already allocated) on cuda:0",
    )
    second = fingerprint(
        "torch.cuda.OutOfMemoryError",
        [],
        "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 79.15 GiB total "
        "capacity; 70.10 GiB already allocated) on cuda:3",
    )
    assert first == second


def test_same_bug_from_another_checkout_and_line_has_same_fingerprint():
    message = "Expected all tensors to be on the same device"
    here = fingerprint("RuntimeError", frames_of(traceback_for("/home/alice/proj", 10)), message)
    there = fingerprint("RuntimeError", frames_of(traceback_for("/srv/ci/proj", 14)), message)
    assert here == there


def test_same_bug_in_another_dtype_has_same_fingerprint():
    template = "expected scalar type {} but found {}"
    assert fingerprint("RuntimeError", [], template.format("torch.float16", "torch.float32")) == (
        fingerprint("RuntimeError", [], template.format("torch.bfloat16", "torch.float32"))
    )


def test_different_errors_at_the_same_call_site_have_different_fingerprints():
    frames = frames_of(traceback_for("/srv/app"))
    oom = fingerprint("RuntimeError", frames, "CUDA out of memory. Tried to allocate 2.00 GiB")
    shape = fingerprint(
        "RuntimeError", frames, "mat1 and mat2 shapes cannot be multiplied (1x2 and 3x4)"
    )
    assert oom != shape


def test_same_error_in_different_user_code_has_different_fingerprints():
    message = "index out of range in self"
    train = fingerprint("IndexError", frames_of(traceback_for("/srv/app")), message)
    other = [dict(frame, function="embed") for frame in frames_of(traceback_for("/srv/app"))]
    assert train != fingerprint("IndexError", other, message)


def test_every_dev_case_has_its_own_fingerprint_unless_the_messages_only_differ_in_numbers():
    seen: dict[str, str] = {}
    for case in dev_cases():
        exceptions = parse_stacktrace(case["traceback"])
        frames = exceptions[-1]["frames"] if exceptions else []
        key = fingerprint(case["exception_type"], frames, case["message"])
        assert len(key) == 64 and int(key, 16) >= 0
        seen.setdefault(key, case["id"])
    # c047 and c049 are the same bug (sequence longer than 512) yet c047 carries a stack.
    assert len(seen) == len(dev_cases())


def test_explicit_fingerprint_wins_over_the_computed_one():
    frames = frames_of(traceback_for("/srv/app"))
    assert fingerprint("A", frames, "x", explicit=["tenant-42"]) == fingerprint(
        "B", [], "y", explicit="tenant-42"
    )
    assert fingerprint("A", frames, "x", explicit=[]) == fingerprint("A", frames, "x")


def test_explicit_default_marker_extends_the_computed_fingerprint():
    plain = fingerprint("E", [], "boom")
    split = fingerprint("E", [], "boom", explicit=["{{ default }}", "eu-west"])
    assert split != plain
    assert split != fingerprint("E", [], "boom", explicit=["{{ default }}", "us-east"])
    assert split != fingerprint("E", [], "bang", explicit=["{{ default }}", "eu-west"])


@pytest.mark.parametrize(
    ("message", "normalised"),
    [
        (
            "Tried to allocate 16.00 MiB (GPU 0; 39.59 GiB total)",
            "Tried to allocate <mem> (GPU <n>; <mem> total)",
        ),
        (
            "found at least two devices, cuda:1 and cuda:0!",
            "found at least two devices, cuda and cuda!",
        ),
        ("copying torch.Size([32008, 64]) into (2x3)", "copying <shape> into <shape>"),
        ("input[64, 1, 224, 224] vs (None, 28, 28)", "input<shape> vs <shape>"),
        ("dtype torch.float16 vs bfloat16", "dtype <dtype> vs <dtype>"),
        ("object at 0x7f3a2b9c10 in /home/me/proj/a.py", "object at <hex> in <path>"),
        ("request 123e4567-e89b-12d3-a456-426614174000 failed", "request <uuid> failed"),
        ("commit 9fceb02d0ae598e95dc970b74767f19372d61af8 is bad", "commit <id> is bad"),
        (
            r"from 'transformers' (C:\ANACON~1\lib\site-packages\x.py)",
            "from 'transformers' (<path>)",
        ),
    ],
)
def test_message_normalisation_strips_run_specific_values(message, normalised):
    assert normalise_message(message) == normalised


def test_title_is_one_short_line_without_a_repeated_type():
    title = issue_title(
        "RuntimeError", "RuntimeError: Error(s) in loading state_dict for X:\n\tsize"
    )
    assert title == "RuntimeError: Error(s) in loading state_dict for X:"
    long = issue_title("ValueError", "x" * 500)
    assert len(long) == 200 and "\n" not in long
    assert issue_title("", "") == "Unknown error"
    assert issue_title("Killed (SIGKILL)", "") == "Killed (SIGKILL)"


def test_culprit_names_the_innermost_in_app_frame():
    frames = frames_of(traceback_for("/srv/app"))
    assert culprit(frames) == "model.py:forward"
    library_only = [dict(frame, in_app=False) for frame in frames]
    assert culprit(library_only) == "torch.nn.modules.linear.f"
    assert culprit([]) == ""


def test_culprit_of_a_jvm_frame_is_module_dot_function():
    frames = frames_of("java.lang.IllegalStateException: x\n\tat com.x.Predictor.run(P.java:3)\n")
    assert culprit(frames) == "com.x.Predictor.run"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=500), st.text(max_size=500), st.text(max_size=2000))
def test_any_input_fingerprints_without_raising(error_type, message, trace):
    key = fingerprint(error_type, frames_of(trace) if parse_stacktrace(trace) else [], message)
    assert len(key) == 64
    title = issue_title(error_type, message)
    assert len(title) <= 200 and "\n" not in title


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.text(max_size=10), st.none() | st.text(max_size=10) | st.booleans())
    ),
    st.none() | st.text(max_size=20) | st.lists(st.none() | st.text(max_size=20)),
)
def test_odd_frames_and_explicit_values_fingerprint_without_raising(frames, explicit):
    assert len(fingerprint("E", frames, "m", explicit=explicit)) == 64
    assert isinstance(culprit(frames), str)


def _normalise_every_pass(message: str) -> str:
    """normalise_message as it was written first: every pattern over every message."""
    from ingest.grouping import _NORMALISERS, _SPACES

    text = message[:2000]
    for pattern, replacement, _needles, _folded in _NORMALISERS:
        text = pattern.sub(replacement, text)
    return _SPACES.sub(" ", text).strip()[:500]


# Pieces of the forms the normalisers look for, the literals they are skipped without,
# and the characters RE2 folds from outside ASCII (K, ſ) or Python lowercases oddly (İ).
_MESSAGE_PIECES = st.sampled_from(
    [
        "torch.Size([2, 3])",
        "TensorShape([None, 4])",
        "Size([",
        "0x1F",
        "0X",
        "12 MiB",
        "3.5 GB",
        "bytes",
        "cuda:0",
        "GPU: 1",
        "rank:3",
        "C:\\x\\y.py",
        "/srv/app/m.py",
        "./a/b",
        "~/x/y/",
        "(4 x 5)",
        "4x5x6",
        "[1, -2, None]",
        "(None, 3,)",
        "float16",
        "torch.bfloat16",
        "FP8",
        "uint8",
        "complex64",
        "half",
        "double",
        "INT32",
        "deadbeef12",
        "a1b2c3",
        "123e4567-e89b-12d3-a456-426614174000",
        "1.2.3",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\x0b",
        "\x1c",
        "\x85",
        "\u00a0",
        "\u2028",
        "é",
        "İnt",
        "ınt",
        "\u212a",
        "ſ",
        "\ud800",
        ":",
        "x",
        ",",
        "[",
        "(",
        ")",
        "]",
        "-",
        "B",
    ]
)
_MESSAGES = st.lists(_MESSAGE_PIECES | st.text(max_size=8), max_size=24).map("".join)


@settings(max_examples=1500, deadline=None)
@given(_MESSAGES)
def test_skipping_passes_whose_literals_are_absent_changes_no_normalised_message(message):
    assert normalise_message(message) == _normalise_every_pass(message)
