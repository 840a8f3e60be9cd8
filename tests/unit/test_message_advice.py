"""The remedy an error message states itself, read as structured advice (issue 16).

Real library messages (most from the dev cases) give concrete advice: an option, a flag,
a variable, a method or value, a package with a direction. Advice that only sends the
reader elsewhere, an imperative that reports a failure, and a sentence that reports what
the library did are not advice. The reader reads untrusted text: Hypothesis feeds it any
string and adversarial ones, and what it returns never carries a URL.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ingest.linear_regex import is_linear
from rca.suggestion import advice_objects, message_advice
from rca.suggestion.checks.urls import urls_in
from rca.suggestion.message_advice import (
    ADVICE_VERBS,
    MAX_ADVICE,
    MAX_CLAUSE,
    MAX_TEXT,
    UNMARKED_VERBS,
    advice_values,
    error_log_texts,
    read_advice,
)
from rca.suggestion.validation import IMPERATIVE_VERBS, format_ok

SPAWN = (
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with"
    " multiprocessing, you must use the 'spawn' start method"
)
KV = (
    "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens"
    " that can be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or"
    " decreasing `max_model_len` when initializing the engine."
)
PROTOBUF = (
    "TypeError: Descriptors cannot not be created directly.\nIf you cannot immediately"
    " regenerate your protos, some other possible workarounds are:\n 1. Downgrade the"
    " protobuf package to 3.20.x or lower.\n 2. Set PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python"
    " (but this will use pure-Python parsing and will be much slower)."
)
NUMPY_WRAPPED = (
    "If you are a user of the module, the easiest solution will be to\ndowngrade to"
    " 'numpy<2' or try to upgrade the affected module."
)


def _first(text: str, logs: tuple[str, ...] = ()) -> str:
    value = advice_values(text, logs).get("message-advice", "")
    return value[:1].upper() + value[1:]


def test_advice_after_a_marker_is_read_with_what_it_names() -> None:
    spawn = next(a for a in read_advice(SPAWN) if a.concrete)
    assert (spawn.verb, spawn.options) == ("use", ("spawn",))
    assert _first(SPAWN) == "Use the 'spawn' start method"
    kv = next(a for a in read_advice(KV) if a.concrete)
    assert kv.options == ("gpu_memory_utilization", "max_model_len")
    # Every gerund of the advice becomes an instruction, not only the first.
    assert kv.text == (
        "Increase `gpu_memory_utilization` or decrease `max_model_len` when initializing the engine"
    )


def test_packages_come_with_their_direction() -> None:
    jax = read_advice("RuntimeError: ... Please update your jax and/or jaxlib packages.")[0]
    assert (jax.packages, jax.direction, jax.concrete) == (("jax", "jaxlib"), "upgrade", True)
    first = read_advice(PROTOBUF)[0]
    assert (first.verb, first.packages, first.direction) == (
        "downgrade",
        ("protobuf",),
        "downgrade",
    )
    pip = read_advice("ImportError: Using 8-bit requires Accelerate: `pip install accelerate`")
    assert [(a.text, a.packages, a.direction) for a in pip] == [
        ("Run `pip install accelerate`", ("accelerate",), "install")
    ]
    # A package verb whose object names no package is not concrete.
    assert not read_advice("Please upgrade the affected module.")[0].concrete


def test_list_items_and_hard_wrapped_sentences_are_read() -> None:
    assert [a.verb for a in read_advice(PROTOBUF)] == ["downgrade", "set"]
    wrapped = read_advice(NUMPY_WRAPPED)[0]
    assert (wrapped.verb, wrapped.options) == ("downgrade", ("numpy<2",))


def test_an_imperative_after_a_comma_or_opening_a_sentence_counts() -> None:
    reshape = (
        "RuntimeError: view size is not compatible with input tensor's size and stride."
        " Use .reshape(...) instead."
    )
    assert _first(reshape) == "Use .reshape(...) instead"
    deprecated = (
        "FutureWarning: `resume_download` is deprecated, use `force_download=True` instead."
    )
    assert _first(deprecated) == "Use `force_download=True` instead"


def test_generic_advice_fills_nothing() -> None:
    for text in (
        "RuntimeError: internal assert failed. Please report a bug to PyTorch.",
        "Error: something broke. See the documentation for `trust_remote_code`.",
        "CUDA kernel errors might be asynchronously reported. For debugging consider passing"
        " CUDA_LAUNCH_BLOCKING=1.",
        "Unable to use CUDA. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        "RuntimeError: CUDA Setup failed. Please run `python -m bitsandbytes` and open an issue"
        " at the bug tracker.",
        "ValueError: Target modules not found. Please check the target modules and try again.",
    ):
        assert advice_values(text) == {}, text


def test_statements_that_report_are_not_advice() -> None:
    for text in (
        "[ONNXRuntimeError] : 1 : FAIL : Load model from m.onnx failed: invalid `ir_version`",
        "RuntimeError: Expected to mark a variable ready only once. Use of a module parameter"
        " outside the `forward` function.",
        "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.",
        "trainer.py: model = Model(use_cache=False if args.gradient_checkpointing else True,",
    ):
        assert advice_values(text) == {}, text


def test_urls_are_cut_out_and_never_returned() -> None:
    text = (
        "RuntimeError: The NVIDIA driver on your system is too old. Please update your GPU"
        " driver by downloading a new version from the URL: http://www.nvidia.com/Download"
    )
    values = advice_values(text)
    assert values["message-advice"] == "update your GPU driver by downloading a new version"
    assert not urls_in(" ".join(values.values()))
    link = "Error: bad config. Please set `evil_option=1` (see [here](https://evil.example/x))."
    assert not urls_in(" ".join(advice_values(link).values()))


def test_error_log_lines_are_read_after_the_message_and_lower_levels_are_not() -> None:
    logs = [
        {"level": "INFO", "message": "Hint: you can set `max_num_seqs` lower"},
        {"level": "ERROR", "message": "Engine failed. Please pass `--enforce-eager` to vllm."},
    ]
    texts = error_log_texts(logs)
    assert texts == ["Engine failed. Please pass `--enforce-eager` to vllm."]
    assert _first("RuntimeError: engine died", tuple(texts)) == "Pass `--enforce-eager` to vllm"
    assert _first(SPAWN, tuple(texts)) == "Use the 'spawn' start method"  # the message first


def test_every_advice_verb_is_an_imperative_the_validator_accepts() -> None:
    assert ADVICE_VERBS <= IMPERATIVE_VERBS
    assert UNMARKED_VERBS <= ADVICE_VERBS
    assert "run" in IMPERATIVE_VERBS  # package manager commands are worded "Run `pip ...`"


def test_every_pattern_runs_in_linear_time() -> None:
    names = [*vars(message_advice).items(), *vars(advice_objects).items()]
    patterns = [v for k, v in names if k.startswith("_") and hasattr(v, "finditer")]
    assert patterns and all(is_linear(p) for p in patterns)


def test_text_beyond_the_bound_is_not_read() -> None:
    late = " " * MAX_TEXT + "You must set `late_option=1`."
    assert advice_values(late) == {}
    many = " ".join(f"Please set `opt_{i}=1`." for i in range(100))
    assert len(read_advice(many)) == MAX_ADVICE


_ADVERSARIAL = st.lists(
    st.sampled_from(
        [
            "you must ",
            "please ",
            "try ",
            "consider ",
            "use ",
            "instead",
            "`",
            "'",
            '"',
            "--",
            "_",
            "=",
            ", ",
            ". ",
            ": ",
            "; ",
            " | ",
            "\n",
            "(",
            ")",
            "1) ",
            "http://x.com/",
            "install ",
            "and/or ",
            "increasing ",
            "a",
            "set ",
            "`pip install ",
            "X_Y=1 ",
        ]  # fmt: skip
    ),
    max_size=400,
).map("".join)


@given(st.one_of(st.text(max_size=3000), _ADVERSARIAL), st.lists(st.text(max_size=300), max_size=5))
def test_any_text_gives_bounded_advice_without_urls(text: str, logs: list[str]) -> None:
    found = read_advice(text, logs)
    assert len(found) <= MAX_ADVICE
    values = advice_values(text, logs)
    assert set(values) <= {"message-advice", "message-advice-quote"}
    for advice in found:
        assert len(advice.text) <= MAX_CLAUSE + 1
        assert advice.verb in ADVICE_VERBS | message_advice.GENERIC_VERBS
    if values:
        assert not urls_in(" ".join(values.values()))
        assert "{" not in values["message-advice"] and "}" not in values["message-advice"]
        ok, problem = format_ok(values["message-advice"] + ".", "Because.")
        assert ok or "single sentence" in problem or "object" in problem, problem
