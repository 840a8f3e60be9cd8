"""IPython's ``---->`` arrow line becomes a frame, under a header or on its own.

IPython marks the line that ran with an arrow (``----> 12     model.to(device)``) under a
frame header: ``Cell In[3], line 12`` / ``File ~/x.py:12, in f`` (IPython >= 8) or
``<ipython-input-3-abc> in <module>()`` (older). Threads often paste only the arrow line;
it is read as a frame of the user's code with its line and source, file unknown.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.notebook_frames import lone_arrow
from ingest.parsing.stacktrace import parse_stacktrace
from tests.support.linear_time import assert_linear

CELL = """\
---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[3], line 12
     10 model = Net()
     11 device = torch.device("cuda")
---> 12     model.to(device)

RuntimeError: CUDA error: out of memory
"""

CLASSIC = """\
---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
<ipython-input-3-9f1e2d3c4b5a> in <module>()
     10 model = Net()
---> 12     model.to(device)

RuntimeError: CUDA error: out of memory
"""

FILE_HEADER = """\
File ~/work/train.py:12, in main(cfg)
     11 device = torch.device("cuda")
---> 12     model.to(device)
"""


def _frames(text: str) -> list[tuple[str, str, int | None, str, bool]]:
    exceptions = parse_stacktrace(text)
    return [
        (f["filename"], f["function"], f["lineno"], f["context_line"], f["in_app"])
        for exc in exceptions
        for f in exc["frames"]
    ]


@pytest.mark.parametrize(
    ("text", "filename", "function"),
    [
        (CELL, "Cell In[3]", "<module>"),
        (CLASSIC, "<ipython-input-3-9f1e2d3c4b5a>", "<module>"),
        (FILE_HEADER, "~/work/train.py", "main"),
    ],
)
def test_arrow_under_a_header_gives_that_frame_its_line_and_code(text, filename, function):
    assert _frames(text) == [(filename, function, 12, "model.to(device)", True)]


@pytest.mark.parametrize(
    "line",
    [
        "----> 4 accelerator = accelerate.Accelerator(fp16=True)",
        "---> 12     model.to(device)",
        "----> 12     model.to(device)",  # padded by hand: still the arrow
        "  -> 1695 return forward_call(*args, **kwargs)",
    ],
)
def test_a_lone_arrow_line_is_a_frame_of_the_users_code(line):
    (frame,) = _frames(line)
    filename, function, lineno, code, in_app = frame
    assert (filename, function, in_app) == ("", "", True)
    assert lineno == int(line.split(">")[1].split()[0])
    assert code == line.split(">", 1)[1].split(None, 1)[1].strip()


def test_a_lone_arrow_then_the_exception_line_keeps_both():
    exceptions = parse_stacktrace(
        "----> 4 accelerator = accelerate.Accelerator(fp16=True)\n\n"
        "TypeError: __init__() got an unexpected keyword argument 'fp16'\n"
    )
    assert [e["type"] for e in exceptions] == ["TypeError"]
    assert exceptions[0]["frames"][0]["context_line"].startswith("accelerator =")


@pytest.mark.parametrize(
    "line",
    [
        "> 12 quoted reply",  # a Markdown quote, no dashes
        "----> 4",  # no source
        "x ----> 4 y = 1",  # not at the start of the line
        "----> four y = 1",
        "---------------------------------------------------------------------------",
    ],
)
def test_other_lines_are_not_arrows(line):
    assert lone_arrow(line) is None
    assert _frames(line) == []


def test_an_arrow_inside_the_message_stays_message_text():
    text = "ValueError: bad value\n----> 3 y = f(x)\n"
    exceptions = parse_stacktrace(text)
    assert exceptions[0]["frames"] == []
    assert "----> 3" in exceptions[0]["message"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("-> 0123456789ab\t")), max_size=80))
def test_lone_arrow_never_raises_and_agrees_with_its_definition(line):
    arrow = lone_arrow(line)
    if arrow is not None:
        assert line.lstrip().startswith("-")
        assert arrow.code and not arrow.code[0].isspace()


@pytest.mark.parametrize(
    "build", [lambda n: "-" * (4 * n), lambda n: "-" * n + ">" + " " * n, lambda n: "->1 " * n]
)
def test_adversarial_lines_take_linear_time(build):
    def read(n: int) -> None:
        line = build(n)
        lone_arrow(line)
        parse_stacktrace(line)

    assert_linear(read, 2_000, 50_000)
