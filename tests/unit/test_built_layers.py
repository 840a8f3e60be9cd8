"""Keras layers an error shows ``built=True`` already have their variables: "build the model
before loading" is no fix for them (``layers-already-built``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.built_layers import BUILT, built_layer_facts
from rca.suggestion.context import AnalysisContext
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import draft, evidence, message_context

_RUNBOOK = ("keras-load-weights-layer-count", 0.9)
_NOT_LOADED = (
    "ValueError: A total of 1 objects could not be loaded. Example error message for object"
    " {layer}:\n\nLayer 'lstm_cell' expected 3 variables, but received 0 variables during"
    " loading. Expected: ['kernel', 'recurrent_kernel', 'bias']\n\nList of objects that could"
    " not be loaded:\n[{layer}]"
)
_KERAS = "tensorflow 2.16.1 and keras 3.1.1 | keras.models.load_model"


@pytest.mark.parametrize(
    ("texts", "built"),
    [
        ([_NOT_LOADED.format(layer="<LSTMCell name=lstm_cell, built=True>")], True),
        (["[<Dense name=dense_1, built=True>, <Conv2D name=conv2d, built=True>]"], True),
        (["<Dense name=dense_1, built=True>", "<Dense name=dense_2, built=False>"], False),
        ([_NOT_LOADED.format(layer="<LSTMCell name=lstm_cell, built=False>")], False),
        # no layer shown, a layer without its state, a sentence about building
        (["Layer 'dense' expected 2 variables, but received 0 variables during loading."], False),
        (["<keras.layers.Dense object at 0x7f>"], False),
        (["the model was built=True before saving"], False),
        ([], False),
    ],
)
def test_the_fact_needs_every_layer_shown_built(texts: list[str], built: bool) -> None:
    assert (BUILT in built_layer_facts(texts)) is built


@pytest.mark.parametrize(("state", "build_first"), [("True", False), ("False", True)])
def test_built_layers_never_get_build_before_loading_as_the_action(
    state: str, build_first: bool
) -> None:
    layer = f"<LSTMCell name=lstm_cell, built={state}>"
    ctx = message_context(_NOT_LOADED.format(layer=layer), _RUNBOOK, logs=(_KERAS,))
    action = OfflineProvider().suggest(ctx).action
    assert action.startswith("Build the model before loading") is build_first


@pytest.mark.parametrize(("state", "contradicted"), [("True", True), ("False", False)])
def test_a_suggestion_to_build_first_fails_validation_when_the_layers_are_built(
    state: str, contradicted: bool
) -> None:
    ctx = AnalysisContext(
        error_type="ValueError",
        message=_NOT_LOADED.format(layer=f"<LSTMCell name=lstm_cell, built={state}>"),
        logs=[{"message": _KERAS}],
        evidence=evidence(_RUNBOOK),
    )
    answer = draft(
        "Build the model before loading: call it once on a batch of the right shape"
        " (`model(tf.zeros((1, ...)))`) or `model.build(input_shape)`, then `load_weights`.",
        "keras-load-weights-layer-count",
        "An unbuilt model has no variables to receive the file.",
    )
    assert validate(answer, ctx).premises_ok is not contradicted


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=4))
def test_any_text_gives_an_answer(texts: list[str]) -> None:
    assert built_layer_facts(texts) <= {BUILT}
