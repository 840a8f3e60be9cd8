"""Validation fails an answer written in another model framework's API than the incident's
code runs (TensorFlow's loss for a PyTorch error), and passes one in the incident's own API,
a conversion naming both, or one that only turns the other framework's API down."""

from __future__ import annotations

import pytest

from rca.suggestion.checks.foreign_api import answer_frameworks, foreign_api_violations
from rca.suggestion.providers import Draft
from rca.suggestion.validation import validate
from tests.support.evidence import message_context

BCE = (
    "RuntimeError: torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to"
    " autocast."
)
TF_OOM = "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating"
RUNBOOK = ("amp-autocast-unsafe-bce", 0.9)


def _llm(action: str) -> Draft:
    return Draft(action, "Because.", RUNBOOK[0], 0.8, "openai", "test-llm")


@pytest.mark.parametrize(
    "action",
    [
        "Use tf.keras.losses.BinaryCrossentropy(from_logits=True).",  # re-review line 130
        "Compute the loss with tf.nn.sigmoid_cross_entropy_with_logits on the logits.",
        "Replace the loss with optax.sigmoid_binary_cross_entropy(logits, labels).",
    ],
)
def test_an_answer_in_another_frameworks_api_fails_validation(action):
    check = validate(_llm(action), message_context(BCE, RUNBOOK))
    assert not check.premises_ok, check.complaints


@pytest.mark.parametrize(
    "action",
    [
        "Use torch.nn.BCEWithLogitsLoss on the logits instead of tf.keras's BinaryCrossentropy.",
        "Drop the final sigmoid and compute the loss with nn.BCEWithLogitsLoss on logits.",
        "Port the tf.keras loss to torch.nn.functional.binary_cross_entropy_with_logits.",
        "Use keras.losses.BinaryCrossentropy(from_logits=True) with the torch backend.",
    ],
)
def test_the_incidents_own_api_a_conversion_or_keras_3_passes(action):
    assert foreign_api_violations(action, {"pytorch"}) == []


def test_nothing_is_foreign_when_the_incident_shows_no_model_framework():
    action = "Re-export the model with torch.onnx.export(model, x, opset_version=17)."
    assert foreign_api_violations(action, {"tensorrt"}) == []
    assert foreign_api_violations(action, set()) == []


def test_a_pytorch_answer_to_a_tensorflow_error_fails():
    assert foreign_api_violations("Call torch.cuda.empty_cache() between steps.", {"tensorflow"})
    assert not foreign_api_violations(
        "Set tf.config.experimental.set_memory_growth.", {"tensorflow"}
    )


def test_the_answers_frameworks_are_read_from_dotted_code_only():
    assert answer_frameworks("Switch from TensorFlow to PyTorch.") == set()
    assert answer_frameworks("Call jnp.where(x > 0, x, 0).") == {"jax"}
    assert answer_frameworks("Do not use tf.function here; call torch.compile.") == {"pytorch"}
