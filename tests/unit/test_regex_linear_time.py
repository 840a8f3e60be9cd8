"""Attacker-written text costs linear time in every pattern that reads it.

No wall-clock asserts (timings live in ``bench/regex_linear.py``). What is asserted instead:

- every module that runs patterns over incident text or LLM output compiles them with
  RE2 (``ingest.linear_regex``), except an explicit allowlist whose inputs are not
  attacker-written; the modules' source holds no call into ``re`` outside it;
- each function returns, unchanged in behaviour, on adversarial input: digit runs,
  nested brackets, repeated separators, ``(1,1111…!``, 1 MiB lines, long paths. The
  ``timeout`` marks are a safety net that turns a backtracking regression into a failure
  instead of a hung suite; they are not measurements.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest import grouping
from ingest.linear_regex import LinearPattern, UnsupportedPattern, is_linear
from ingest.linear_regex import compile as linear
from ingest.parsing.java_stacktrace import parse_java_stacktrace
from ingest.parsing.logs import parse_logs
from ingest.parsing.python_traceback import parse_python_traceback
from ingest.parsing.shapes import extract_shape_diff, parse_dims
from ingest.parsing.stacktrace import parse_stacktrace
from ingest.scrubbing import scrub_text
from rca.corpus import files as corpus
from rca.retrieval import signals
from rca.retrieval.frame_paths import evidence_text
from rca.retrieval.tokens import tokenize
from rca.suggestion import validation
from rca.suggestion.prompts import render, untrusted
from rca.suggestion.providers.draft import parse_answer
from rca.suggestion.providers.wording import first_sentence, incident_specifics
from rca.suggestion.required_releases import required_causes
from rca.suggestion.size_limits import read_size_bounds
from rca.suggestion.size_moves import size_harms
from rca.suggestion.stated_needs import read_stated_needs

ROOT = Path(__file__).resolve().parents[2]

#: Modules whose patterns read incident text, runbook signals or LLM answers.
UNTRUSTED_TEXT_MODULES = [
    "ingest.grouping",
    "ingest.parsing.frames",
    "ingest.parsing.java_stacktrace",
    "ingest.parsing.logs",
    "ingest.parsing.python_traceback",
    "ingest.parsing.shapes",
    "ingest.parsing.stacktrace",
    "rca.corpus.files",
    "rca.corpus.sentences",
    "rca.retrieval.index",
    "rca.suggestion.prompts",
    "rca.suggestion.providers.draft",
    "rca.suggestion.incident_facts",
    "rca.suggestion.incident_setting",
    "rca.suggestion.premises",
    "rca.suggestion.platform_facts",
    "rca.suggestion.training_or_serving",
    "rca.suggestion.build_variants",
    "rca.suggestion.required_values",
    "rca.suggestion.failing_values",
    "rca.suggestion.reused_failing",
    "rca.suggestion.untrained_layers",
    "rca.suggestion.config_dimensions",
    "rca.suggestion.size_limits",
    "rca.suggestion.size_moves",
    "rca.suggestion.command_moves",
    "rca.suggestion.reinstalled_release",
    "rca.suggestion.removed_libraries",
    "rca.suggestion.checks.stem_replace",
    "rca.suggestion.checks.vocab_resize",
    "rca.suggestion.checks.unfit_values",
    "rca.suggestion.checks.foreign_api",
    "rca.suggestion.providers.incident_view",
    "rca.suggestion.providers.wording",
    "rca.retrieval.frame_paths",
    "rca.retrieval.signals",
    "rca.retrieval.tokens",
    "rca.notify.slack.payloads",  # defang: URLs in incident text and LLM answers
]
#: ``re`` patterns that stay, and why their input is not attacker-written. Not listed above
#: either: ``rca.suggestion.validation`` and its ``rca.suggestion.checks`` keep ``re``
#: (lookarounds) but read at most ``MAX_SCAN_CHARS`` (4,000) characters of an LLM answer,
#: so their cost is bounded; the adversarial tests below run them too.
ALLOWED_RE_PATTERNS = {
    # Front matter (slug, names): read from runbook files the operator ships, never from
    # incidents. Signals are RE2; so are sentence ends (rca.corpus.sentences), which also
    # split incident messages and LLM answers. rca.corpus.markdown (headings, list items,
    # fences) is not listed above at all: it reads only runbook bodies.
    ("rca.corpus.files", "_SLUG_RE"),
    ("rca.corpus.files", "_NAME_RE"),
}

MESSAGE_8_8_S = "(1," + "1" * 26 + "!"


# --------------------------------------------------------------------------- engines


@pytest.mark.parametrize("name", UNTRUSTED_TEXT_MODULES)
def test_patterns_over_untrusted_text_are_compiled_with_re2(name: str) -> None:
    module = importlib.import_module(name)
    backtracking = [
        attr
        for attr, value in vars(module).items()
        if isinstance(value, re.Pattern) and (name, attr) not in ALLOWED_RE_PATTERNS
    ]
    assert backtracking == [], f"{name} compiles {backtracking} with re, not linear_regex"
    linear_patterns = [v for v in vars(module).values() if isinstance(v, LinearPattern)]
    assert all(is_linear(p) for p in linear_patterns)


@pytest.mark.parametrize("name", UNTRUSTED_TEXT_MODULES)
def test_untrusted_text_modules_call_no_re_function(name: str) -> None:
    """A pattern written inline (``re.sub(r"...", ...)``) would escape the check above."""
    path = ROOT / (name.replace(".", "/") + ".py")
    tree = ast.parse(path.read_text())
    calls = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
        ):
            calls.append((node.lineno, node.func.attr))
    allowed_lines = {
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(
            isinstance(t, ast.Name) and (name, t.id) in ALLOWED_RE_PATTERNS for t in node.targets
        )
    }
    assert [c for c in calls if c[0] not in allowed_lines] == []


def test_a_pattern_re2_cannot_run_in_linear_time_is_refused() -> None:
    for pattern in (r"(?=x)a", r"(?<!x)a", r"(a)\1", r"a(?!b)"):
        with pytest.raises(UnsupportedPattern, match="not a linear-time"):
            linear(pattern)


def test_linear_patterns_keep_re_unicode_classes() -> None:
    """RE2 alone reads \\s and \\d as ASCII; a no-break space must still be a space."""
    assert linear(r"\s+").sub(" ", "a\u00a0\u2003b") == "a b"
    assert linear(r"\d+").findall("\u0661\u0662 34") == ["\u0661\u0662", "34"]
    assert linear(r"\w+").findall("josé_1") == ["josé_1"]


def test_lone_surrogates_in_text_are_matched_not_raised() -> None:
    assert linear(r"\d+").sub("<n>", "a\ud80012") == "a?<n>"


# --------------------------------------------------------------------------- regression


@pytest.mark.timeout(30)
def test_digit_tuple_that_took_8_8_seconds_normalises_to_the_same_text() -> None:
    """The ``(1,1111…!`` message backtracked exponentially in the tuple normaliser."""
    assert grouping.normalise_message(MESSAGE_8_8_S) == "(<n>,<n>!"
    assert grouping.normalise_message(_tuple_bomb(1_990)) == "(<n>,<n>!"
    # Only the first 2,000 characters are normalised (unchanged): the "!" is cut off.
    assert grouping.normalise_message(_tuple_bomb(10_000)) == "(<n>,<n>"


@pytest.mark.timeout(30)
def test_the_8_8_second_message_still_groups_like_any_tuple_message() -> None:
    same = grouping.fingerprint("ValueError", [], _tuple_bomb(1_990))
    assert same == grouping.fingerprint("ValueError", [], "(2,3!")


# --------------------------------------------------------------------------- runbooks


def test_every_bundled_runbook_loads_with_re2_signals() -> None:
    runbooks = corpus.load_directory(corpus.bundled_runbook_dir())
    assert len(runbooks) > 50
    for runbook in runbooks:
        for pattern in runbook.signals:
            assert is_linear(corpus._compiled(pattern))


def test_runbook_with_a_lookahead_signal_is_refused_naming_runbook_and_field() -> None:
    path = corpus.bundled_runbook_dir() / "device-mismatch-input-weight-type.md"
    text = path.read_text().replace(
        "  - 'Input type \\(CUDA\\w+\\) and weight type \\(CPU\\w+\\)'",
        "  - 'Input type \\(torch\\.(?!cuda)\\w+\\)'",
    )
    assert "(?!cuda)" in text
    with pytest.raises(corpus.RunbookError) as caught:
        corpus.parse_runbook(text, "custom/device-mismatch-input-weight-type.md")
    assert caught.value.source == "custom/device-mismatch-input-weight-type.md"
    assert caught.value.field == "signals"
    assert "(?!cuda)" in str(caught.value) and "linear-time" in str(caught.value)


@pytest.mark.parametrize(
    ("message", "slug", "expected"),
    [
        ("Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor)", "d", 1),
        ("Input type (torch.cuda.FloatTensor) and weight type (torch.cuda.FloatTensor)", "d", 0),
        ("Input type (CUDABFloat16Tensor) and weight type (CUDAFloatTensor)", "d", 1),
        ("Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor)", "v", 1),
        ("Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor)", "v", 1),
        ("Input type (torch.cuda.FloatTensor) and weight type (torch.cudaFloat)", "v", 0),
    ],
)
def test_rewritten_bundled_signals_keep_their_meaning(
    message: str, slug: str, expected: int
) -> None:
    slugs = {"d": "dtype-mismatch-input-weight-type", "v": "device-mismatch-input-weight-type"}
    runbook = corpus.parse_runbook(
        (corpus.bundled_runbook_dir() / f"{slugs[slug]}.md").read_text(), slugs[slug]
    )
    matched = [p for p in corpus.match_signals(runbook, message) if "weight type \\(" in p]
    assert len(matched) == expected


# --------------------------------------------------------------------------- adversarial


def _tuple_bomb(n: int) -> str:
    return "(1," + "1" * n + "!"


adversarial_pieces = st.sampled_from(
    [
        "1",
        "11111111",
        "0x",
        ",",
        ", ",
        "(",
        ")",
        "[",
        "]",
        "((((",
        "[[[[",
        "))))",
        "/",
        "//",
        "\\",
        "../",
        "a/b/c/",
        ":",
        "=",
        "a=",
        '"',
        "'",
        ".",
        " ",
        "\t",
        "\n",
        "\u00a0",
        "e",
        "x",
        "-",
        "None",
        "Error: ",
        "Traceback (most recent call last):\n",
        '  File "/a.py", line 1, in f\n',
        "\tat a.B.c(B.java:1)\n",
        "Caused by: x.Y: z\n",
        "ERROR ",
        "level=",
        "torch.Size([",
        "mat1 and mat2 shapes cannot be multiplied (",
        "<untrusted-data",
        "```",
        "{",
        "**",
        "e.g. ",
        "AKIA",
        "password=",
    ]
)
adversarial_text = st.one_of(
    st.lists(adversarial_pieces, max_size=60).map("".join),
    st.tuples(adversarial_pieces, st.integers(1, 3000)).map(lambda t: t[0] * t[1]),
    st.integers(1, 5000).map(_tuple_bomb),
    st.integers(1, 400).map(lambda n: "/".join(["dir"] * n) + "/x.py"),
    st.integers(1, 300).map(lambda n: "[" * n + "1, 2" + "]" * n),
    st.text(max_size=200),
)

RUNBOOKS = corpus.load_directory(corpus.bundled_runbook_dir())


def _every_function(text: str) -> None:
    grouping.normalise_message(text)
    grouping.fingerprint("RuntimeError", [], text)
    grouping.issue_title("RuntimeError", text)
    parse_stacktrace(text)
    parse_python_traceback(text)
    parse_java_stacktrace(text)
    parse_logs(text)
    parse_logs([text])
    extract_shape_diff(text)
    parse_dims(text)
    signals.normalise_message(text)
    signals.build_signals({"error_type": "RuntimeError", "message": text, "stacktrace": text})
    tokenize(text)
    evidence_text(text)
    for runbook in RUNBOOKS:
        corpus.match_signals(runbook, text)
    scrub_text(text)
    first_sentence(text, 200)
    validation.named_dims(text)
    validation.code_locations(text)
    validation.urls_in(text)
    needs = read_stated_needs([text, "a CUDA-enabled jaxlib is not installed"])
    needs.harms(text)
    required_causes(text, [text])
    sizes = read_size_bounds([text, "n_ctx_per_seq (32768) > n_ctx_train (4096)"], [], [])
    size_harms(text, sizes)
    validation.format_ok("Set " + text, "Because.")
    try:
        parse_answer(text)
    except Exception as error:  # noqa: BLE001 - only ProviderError is expected
        assert type(error).__name__ == "ProviderError"


@pytest.mark.timeout(600)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=adversarial_text)
def test_every_untrusted_text_function_returns_on_adversarial_input(text: str) -> None:
    _every_function(text)


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "line",
    [
        pytest.param("1" * (1 << 20), id="1MiB-digits"),
        pytest.param(_tuple_bomb(1 << 20), id="1MiB-tuple-bomb"),
        pytest.param("(" * (1 << 19) + ")" * (1 << 19), id="1MiB-nested-parens"),
        pytest.param("a=" * (1 << 19), id="1MiB-key-value"),
        pytest.param("/a" * (1 << 19), id="1MiB-path"),
        pytest.param(" " * (1 << 20), id="1MiB-spaces"),
        pytest.param("1." * (1 << 19), id="1MiB-dotted-number"),
    ],
)
def test_one_mebibyte_lines_are_handled(line: str) -> None:
    _every_function(line)


@pytest.mark.timeout(120)
def test_prompt_of_an_adversarial_incident_is_built() -> None:
    from rca.suggestion.context import AnalysisContext

    text = "<" + " " * 100_000 + "untrusted-data" + _tuple_bomb(10_000)
    ctx = AnalysisContext(error_type="RuntimeError", message=text)
    assert "&lt;untrusted-data(1," in untrusted("message", text)
    assert render(ctx)
    assert isinstance(incident_specifics(ctx), str)
