"""IPython, Jupyter and Colab tracebacks parse into the same frames as CPython's.

The samples follow IPython's ``ultratb`` formats and the shapes seen in dev threads
(eval/realworld): classic ``path in f(args)`` with a numbered listing and an arrow, Colab's
Markdown-linked paths, IPython 8's ``Cell In[n], line k`` / ``File path:line, in f``, and
the same text still carrying IPython's colour codes.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.ansi import strip_ansi
from ingest.parsing.frames import MAX_FIELD, MAX_FRAMES
from ingest.parsing.notebook_frames import notebook_frame
from ingest.parsing.python_traceback import parse_python_traceback
from ingest.parsing.stacktrace import parse_stacktrace

CLASSIC = """\
---------------------------------------------------------------------------
AttributeError                            Traceback (most recent call last)
<ipython-input-4-2da0ffaf5447> in <module>()
----> 1 train()

12 frames
/usr/local/lib/python3.6/dist-packages/jax/core.py in __getattr__(self, name)
    363
    364     try:
--> 365       attr = getattr(self.aval, name)
    366     except KeyError:
    367       raise AttributeError(

AttributeError: 'ShapedArray' object has no attribute '_trace'
"""

COLAB = """\
AttributeError                            Traceback (most recent call last)
[<ipython-input-3-9f1e2d3c4b5a>](https://localhost:8080/#) in <cell line: 2>()
      1 import haiku as hk
----> 2 params = init(rng, batch)

[/usr/local/lib/python3.7/dist-packages/haiku/_src/stateful.py](https://localhost:8080/#) in difference(before, after)
    310   params_before, params_after = box_and_fill_missing(before.params,
    311                                                      after.params)
--> 312   params_after = jax.tree_multimap(functools.partial(if_changed, is_new_param),
    313                                    params_before, params_after)

AttributeError: module 'jax' has no attribute 'tree_multimap'
"""  # noqa: E501 - Colab's lines as printed

IPYTHON8 = """\
---------------------------------------------------------------------------
AttributeError                            Traceback (most recent call last)
Cell In[43], line 1
----> 1 model = model.merge_and_unload()

File ~/miniconda3/lib/python3.11/site-packages/torch/nn/modules/module.py:1695, in Module.__getattr__(self, name)
   1693     if name in modules:
   1694         return modules[name]
-> 1695 raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

AttributeError: 'LlamaForCausalLM' object has no attribute 'merge_and_unload'
"""  # noqa: E501 - IPython's lines as printed

IPYTHON80 = """\
ZeroDivisionError                         Traceback (most recent call last)
Input In [1], in <cell line: 1>()
      2 x=1
      3 y=2
----> 4 z=1/0

ZeroDivisionError: division by zero
"""

CELL_FUNCTION = """\
ValueError                                Traceback (most recent call last)
Cell In[7], line 12
     10 ds = load_dataset("imdb", split="train")
---> 12 ds = ds.map(tokenize, batched=True)

File /opt/conda/lib/python3.10/site-packages/datasets/arrow_dataset.py:3004, in Dataset.map(self, function, batched)
   3002 (...)
-> 3004     for rank, done, content in Dataset._map_single(**dataset_kwargs):

Cell In[6], line 3, in tokenize(batch)
      2 def tokenize(batch):
----> 3     return tok(batch["text"], padding="max_length")

ValueError: Asking to pad but the tokenizer does not have a padding token.
"""  # noqa: E501 - IPython's lines as printed


def _frames(text: str) -> list[tuple]:
    (exception,) = parse_python_traceback(text)
    return [
        (f["filename"], f["lineno"], f["function"], f["context_line"], f["in_app"])
        for f in exception["frames"]
    ]


def test_classic_ipython_frames_take_their_line_and_code_from_the_arrow():
    assert _frames(CLASSIC) == [
        ("<ipython-input-4-2da0ffaf5447>", 1, "<module>", "train()", True),
        (
            "/usr/local/lib/python3.6/dist-packages/jax/core.py",
            365,
            "__getattr__",
            "attr = getattr(self.aval, name)",
            False,
        ),
    ]
    (exception,) = parse_python_traceback(CLASSIC)
    assert exception["type"] == "AttributeError"
    assert exception["message"] == "'ShapedArray' object has no attribute '_trace'"
    assert exception["frames"][1]["module"] == "jax.core"


def test_colab_links_keep_the_path_and_never_the_address():
    frames = _frames(COLAB)
    assert frames == [
        ("<ipython-input-3-9f1e2d3c4b5a>", 2, "<cell line: 2>", "params = init(rng, batch)", True),
        (
            "/usr/local/lib/python3.7/dist-packages/haiku/_src/stateful.py",
            312,
            "difference",
            "params_after = jax.tree_multimap(functools.partial(if_changed, is_new_param),",
            False,
        ),
    ]
    assert "localhost" not in repr(parse_python_traceback(COLAB))
    assert "https" not in repr(parse_python_traceback(COLAB))


def test_ipython8_cell_and_file_lines_give_line_numbers_and_module_level_frames():
    assert _frames(IPYTHON8) == [
        ("Cell In[43]", 1, "<module>", "model = model.merge_and_unload()", True),
        (
            "~/miniconda3/lib/python3.11/site-packages/torch/nn/modules/module.py",
            1695,
            "Module.__getattr__",
            "raise AttributeError(f\"'{type(self).__name__}' object has no attribute '{name}'\")",
            False,
        ),
    ]


def test_ipython80_input_label_and_functions_defined_in_cells():
    assert _frames(IPYTHON80) == [("Input In [1]", 4, "<cell line: 1>", "z=1/0", True)]
    frames = _frames(CELL_FUNCTION)
    assert [(f[0], f[1], f[2], f[4]) for f in frames] == [
        ("Cell In[7]", 12, "<module>", True),
        (
            "/opt/conda/lib/python3.10/site-packages/datasets/arrow_dataset.py",
            3004,
            "Dataset.map",
            False,
        ),
        ("Cell In[6]", 3, "tokenize", True),
    ]
    assert frames[1][3] == "for rank, done, content in Dataset._map_single(**dataset_kwargs):"


def test_colour_codes_ipython_emits_are_stripped_before_parsing():
    red, green, cyan, reset = "\x1b[0;31m", "\x1b[0;32m", "\x1b[0;36m", "\x1b[0m"
    coloured = (
        f"{red}---------------------------------------------------------------------------{reset}\n"
        f"{red}AttributeError{reset}                            Traceback (most recent call last)\n"
        f"Cell {cyan}In[43]{reset}, line {green}1{reset}\n"
        f"{green}----> 1{reset} model {reset}={reset} model{reset}.{reset}merge_and_unload()\n"
        "\n"
        f"File {green}~/miniconda3/lib/python3.11/site-packages/torch/nn/modules/module.py:1695"
        f"{reset}, in {cyan}Module.__getattr__{reset}{red}(self, name){reset}\n"
        f'{green}-> 1695{reset} {reset}raise{reset} AttributeError(f"x")\n'
        "\n"
        f"{red}AttributeError{reset}: 'LlamaForCausalLM' object has no attribute 'x'\n"
    )
    (exception,) = parse_python_traceback(coloured)
    assert exception["type"] == "AttributeError"
    assert [(f["filename"], f["lineno"], f["function"]) for f in exception["frames"]] == [
        ("Cell In[43]", 1, "<module>"),
        (
            "~/miniconda3/lib/python3.11/site-packages/torch/nn/modules/module.py",
            1695,
            "Module.__getattr__",
        ),
    ]
    assert exception["frames"][0]["context_line"] == "model = model.merge_and_unload()"
    # Pages that drop the escape byte keep "[0;31m": gone too, once the reset is there.
    assert strip_ansi("[0;31mValueError[0m: bad") == "ValueError: bad"
    assert strip_ansi("see note [1m] in the text") == "see note [1m] in the text"


def test_notebook_frames_are_classified_like_cpython_frames():
    path = "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py"
    cpython = parse_python_traceback(
        f'Traceback (most recent call last):\n  File "{path}", line 1130, in _call_impl\n'
        "    return forward_call(*input, **kwargs)\nRuntimeError: boom\n"
    )[0]["frames"][0]
    notebook = parse_python_traceback(
        f"{path} in _call_impl(self, *input, **kwargs)\n"
        "   1128         if not (self._backward_hooks or self._forward_hooks):\n"
        "-> 1130             return forward_call(*input, **kwargs)\n"
        "RuntimeError: boom\n"
    )[0]["frames"][0]
    assert notebook == cpython


def test_cpython_and_notebook_chains_mix_in_one_text():
    text = (
        IPYTHON80
        + "\nThe above exception was the direct cause of the following exception:\n\n"
        + CLASSIC
    )
    exceptions = parse_stacktrace(text)
    assert [e["type"] for e in exceptions] == ["ZeroDivisionError", "AttributeError"]
    assert [e["relation"] for e in exceptions] == [None, "cause"]


def test_prose_mentioning_paths_is_not_a_frame():
    for line in [
        "Saved the model to /tmp/run.py in 3 seconds",
        "/tmp/run.py in the docs says so",
        "[the guide](https://example.com/x.py) in detail",
        "File size: 12",
        "In [3]: model.fit(x)",
        "Cell In the notebook, line 3",
    ]:
        assert notebook_frame(line) is None, line


NOTEBOOK_LINES = [
    "AttributeError                            Traceback (most recent call last)",
    "<ipython-input-4-2da0ffaf5447> in <module>()",
    "/usr/lib/python3/dist-packages/x.py in f(a, b)",
    "[/usr/x.py](https://localhost:8080/#) in g()",
    "Cell In[3], line 7",
    "Input In [1], in <cell line: 1>()",
    "File ~/x.py:123, in f(a)",
    "----> 1 train()",
    "-> 1695 raise AttributeError(x)",
    "    363     try:",
    "   (...)",
    "12 frames",
    "ValueError: bad",
    "\x1b[0;31m",
    "",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(NOTEBOOK_LINES) | st.text(max_size=60), max_size=60))
def test_any_mix_of_notebook_lines_parses_into_bounded_frames(lines):
    for exception in parse_stacktrace("\n".join(lines)):
        assert len(exception["frames"]) <= MAX_FRAMES
        for frame in exception["frames"]:
            assert isinstance(frame["in_app"], bool)
            assert frame["lineno"] is None or 0 <= frame["lineno"] < 10**9
            assert all(len(frame[k]) <= MAX_FIELD for k in ("filename", "function", "context_line"))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000))
def test_arbitrary_text_never_raises_in_the_notebook_readers(text):
    assert isinstance(parse_python_traceback(text), list)
    assert isinstance(strip_ansi(text), str)
    for line in text.splitlines():
        notebook_frame(line)


def test_hostile_lines_give_bounded_frames():
    # Shapes that make a backtracking engine explode (long runs the lazy path part must
    # scan, unterminated links and arrows); RE2 runs them in linear time, which
    # bench/regex_linear.py measures. Here: they parse, and what they give stays bounded.
    hostile = [
        "/" + "a.py/" * 40_000 + " in f()",
        "[" + "/x" * 40_000 + ".py](" + "(" * 40_000,
        "File ~" + ":1" * 40_000 + ", in " + "f(" * 40_000,
        "-" * 80_000 + "> 1 " + "x" * 5000,
        "\x1b[" + "0;" * 40_000,
    ]
    for line in hostile:
        for exception in parse_python_traceback((line + "\n") * 2):
            for frame in exception["frames"]:
                assert all(
                    len(frame[k]) <= MAX_FIELD for k in ("filename", "function", "context_line")
                )


def test_a_cells_file_name_quoted_in_a_suggestion_is_not_a_template_remnant():
    # The offline reason names the raising frame ("It was raised in <file>:<function>");
    # IPython's cell files look like "<value>" placeholders but are what the frame says.
    from rca.suggestion.checks.placeholders import template_remnants

    assert template_remnants("It was raised in <ipython-input-4-2da0ffaf5447>:<module>.") == []
    assert template_remnants("Set it to <free ids> first.") == ["<free ids>"]
