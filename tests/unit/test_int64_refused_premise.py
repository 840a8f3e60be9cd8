"""Inputs are not cast to int64 when the message says 64-bit integers are refused.

A judge's generic harm class (issue 16): "convert the inputs to int64" when the message says
int64 inputs are refused; the fix goes the other way (int32, or the runtime's or exporter's
option that accepts int64). :mod:`rca.suggestion.int64_refused` reads ``int64-refused``; the
int64 cast steps carry it in ``unless``, an int32 step ``fits`` it, and
:mod:`rca.suggestion.checks.int64_cast` fails an int64 cast in any wording. The other
direction: "expected scalar type Long but found Int" still gets the int64 cast.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rca.suggestion.checks.int64_cast import casts_to_int64, int64_violations
from rca.suggestion.int64_refused import INT64_REFUSED, int64_facts
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.validation import validate
from tests.support.evidence import message_context

LONG = ("dtype-mismatch-index-long", 0.9)
ORT = ("onnxruntime-input-shape-type", 0.9)

#: Wordings that refuse int64 (runtimes, devices, exporters).
REFUSED = [
    "[W] [TRT] onnx2trt_utils.cpp:366: Your ONNX model has been generated with INT64 weights,"
    " while TensorRT does not natively support INT64. Attempting to cast down to INT32.",
    "RuntimeError: MPS does not support cumsum op with int64 input",
    "UserWarning: Explicitly requested dtype int64 requested in asarray is not available, and"
    " will be truncated to dtype int32. To enable more dtypes, set the jax_enable_x64"
    " configuration option or the JAX_ENABLE_X64 shell environment variable.",
    "onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 :"
    " INVALID_ARGUMENT : Unexpected input data type. Actual: (tensor(int64)) , expected:"
    " (tensor(int32))",
    "Error: Unsupported data type: int64",
    "TypeError: int64 is not supported by the WebGL backend",
    "ValueError: 64-bit integer inputs are not supported on this device; use int32.",
    "RuntimeError: \"bitwise_and_cpu\" not implemented for 'Long'",
    "RuntimeError: expected scalar type Int but found Long",
]
#: Wordings where int64 is what the operation wants, or that say nothing of it.
WANTED = [
    "RuntimeError: expected scalar type Long but found Int",
    "RuntimeError: Expected tensor for argument #1 'indices' to have one of the following scalar"
    " types: Long, Int; but got torch.cuda.FloatTensor instead (while checking arguments for"
    " embedding)",
    "INVALID_ARGUMENT : Unexpected input data type. Actual: (tensor(int32)) , expected:"
    " (tensor(int64))",
    "RuntimeError: \"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Int'",
    "ValueError: sequences that long are not supported by this model",
    "ERROR: uint64 is not supported",
]


def _llm(action: str, runbook: str = LONG[0]) -> Draft:
    return Draft(action, "The op takes that dtype.", runbook, 0.8, "openai", "test-llm")


@pytest.mark.parametrize("message", REFUSED)
def test_refusals_are_read(message):
    assert INT64_REFUSED in read_premises(message_context(message)).facts


@pytest.mark.parametrize("message", WANTED)
def test_wanted_or_unrelated_int64_is_not_refused(message):
    assert INT64_REFUSED not in read_premises(message_context(message)).facts


def test_readings_that_disagree_claim_nothing():
    assert int64_facts([REFUSED[1], WANTED[0]]) == set()


@pytest.mark.parametrize("runbook", [LONG, ORT])
@pytest.mark.parametrize("message", [REFUSED[1], REFUSED[3], REFUSED[6], REFUSED[8]])
def test_an_int64_cast_is_never_the_action(message, runbook):
    ctx = message_context(message, runbook)
    actions = [c.action for c in rank_steps(ctx)]
    assert not [a for a in actions if int64_violations(a, {INT64_REFUSED})], actions
    suggestion = OfflineProvider().suggest(ctx)
    assert not int64_violations(suggestion.action, {INT64_REFUSED}), suggestion.action


def test_onnx_runtime_refusing_int64_gets_the_int32_step():
    suggestion = OfflineProvider().suggest(message_context(REFUSED[3], ORT))
    assert "int32" in suggestion.action, suggestion.action


@pytest.mark.parametrize("message", WANTED[:2])
def test_long_indices_still_get_the_int64_cast(message):
    suggestion = OfflineProvider().suggest(message_context(message, LONG))
    assert casts_to_int64(suggestion.action), suggestion.action


@pytest.mark.parametrize(
    ("action", "harmful"),
    [
        ("Convert token ids to int64 (`ids.long()`).", True),
        ("Cast the inputs with `x.astype(np.int64)` before `session.run`.", True),
        ("Use `torch.as_tensor(y, dtype=torch.long)` for the ids.", True),
        ("Cast ids with `tf.cast(ids, tf.int64)`.", True),
        ("Feed the ids as int64.", True),
        ("Cast the ids to int32 (`ids.astype(np.int32)`) instead of int64.", False),
        ("Enable 64-bit types with `jax.config.update('jax_enable_x64', True)`.", False),
        ("Run the cumsum on the CPU or cast to float32 first.", False),
    ],
)
def test_an_llm_answer_casting_to_int64_fails_validation(action, harmful):
    ctx = message_context(REFUSED[1], LONG)
    check = validate(_llm(action), ctx)
    assert (not check.premises_ok) == harmful, check.complaints
    if harmful:
        assert any("do not cast to int64" in c for c in check.complaints)


def test_the_same_answer_passes_when_long_is_expected():
    ctx = message_context(WANTED[0], LONG)
    assert validate(_llm("Convert token ids to int64 (`ids.long()`)."), ctx).premises_ok


# --------------------------------------------------------------------------- properties

_TEMPLATES = [
    "{name} is not supported",
    "does not support {name}",
    "Unsupported data type: {name}",
    "no support for {name} reduction ops",
]


@given(
    which=st.integers(0, len(_TEMPLATES) - 1),
    name=st.sampled_from(["int64", "INT64", "torch.int64", "64-bit integers"]),
    prefix=st.text(alphabet=st.sampled_from(list("abc ,:")), max_size=60),
)
def test_each_refusal_template_is_read(which, name, prefix):
    assert int64_facts([prefix + " " + _TEMPLATES[which].format(name=name)]) == {INT64_REFUSED}


@given(
    st.text(alphabet=st.sampled_from(list("int64 is not supported LongIcast.()")), max_size=3000)
)
def test_arbitrary_text_never_raises(text):
    int64_facts([text])
    int64_violations(text, {INT64_REFUSED})


@pytest.mark.parametrize(
    "piece", ["int64 a b c ", "does not support a ", "unsupported data type ", "cast x to "]
)
def test_reading_is_linear_in_adversarial_text(piece):
    def seconds(size: int) -> float:
        text = (piece * (size // len(piece) + 1))[:size]
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            int64_facts([text])
            int64_violations(text, {INT64_REFUSED})
            best = min(best, time.perf_counter() - started)
        return best

    small, large = seconds(2_000), seconds(80_000)
    assert large < max(1.0, 60 * small), (small, large)
