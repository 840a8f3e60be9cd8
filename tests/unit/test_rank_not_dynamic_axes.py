"""An input with fewer axes than the graph takes is not fixed by re-exporting with dynamic
axes: ``dynamic_axes`` frees a dimension's size, it never lets a graph take an input without
one of its axes. The re-export step of ``onnxruntime-input-shape-type`` carries
``input-lacks-axis`` in ``unless`` and the reshape step ``fits`` it (read by
:mod:`rca.suggestion.rank_direction`). An input with an axis too many keeps the re-export: a
model exported with a fixed batch of one, fed samples stacked into an extra axis, needs its
batch axis made dynamic (and the samples fed as that axis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.context import AnalysisContext
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.rank_direction import EXTRA_AXIS, LACKS_AXIS, rank_facts
from rca.suggestion.validation import validate
from tests.support.evidence import draft, evidence, message_context

_ORT = ("onnxruntime-input-shape-type", 0.9)
_RANK = (
    "onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 :"
    " INVALID_ARGUMENT : Invalid rank for input: input Got: {got} Expected: {expected} Please"
    " fix either the inputs or the model."
)
_DIMENSION = (
    "onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 :"
    " INVALID_ARGUMENT : Got invalid dimensions for input: input_ids for the following"
    " indices\n index: 1 Got: 12 Expected: 8\n Please fix either the inputs or the model."
)
_REEXPORT = "Re-export with `dynamic_axes`"


@pytest.mark.parametrize(("got", "expected"), [(4, 5), (2, 4), (3, 4)])
def test_an_input_lacking_an_axis_gets_the_reshape_never_the_re_export(
    got: int, expected: int
) -> None:
    message = _RANK.format(got=got, expected=expected)
    assert LACKS_AXIS in rank_facts(message, [])
    action = OfflineProvider().suggest(message_context(message, _ORT)).action
    assert not action.startswith(_REEXPORT)
    assert "np.expand_dims" in action


@pytest.mark.parametrize("message", [_DIMENSION, _RANK.format(got=5, expected=4)])
def test_other_shape_errors_keep_the_re_export_among_the_steps(message: str) -> None:
    assert LACKS_AXIS not in rank_facts(message, [])
    suggestion = OfflineProvider().suggest(message_context(message, _ORT))
    assert "dynamic_axes" in f"{suggestion.action} {suggestion.reason}"


@pytest.mark.parametrize(
    ("message", "contradicted"),
    [
        (_RANK.format(got=4, expected=5), True),
        (_RANK.format(got=1, expected=2), True),
        (_RANK.format(got=5, expected=4), False),
        (_DIMENSION, False),
    ],
)
def test_a_dynamic_axes_suggestion_fails_validation_when_the_input_lacks_an_axis(
    message: str, contradicted: bool
) -> None:
    ctx = AnalysisContext(error_type="InvalidArgument", message=message, evidence=evidence(_ORT))
    answer = draft(
        "Re-export with `dynamic_axes` (or `dynamic_shapes`) for batch and sequence dimensions"
        ' (`dynamic_axes={"input": {0: "batch"}}`).',
        "onnxruntime-input-shape-type",
        "Dimensions not declared dynamic are frozen to the dummy input's size.",
    )
    assert validate(answer, ctx).premises_ok is not contradicted


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_an_answer(text: str) -> None:
    assert rank_facts(text, []) <= {LACKS_AXIS, EXTRA_AXIS}
