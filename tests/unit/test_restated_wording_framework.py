"""Which framework's wording of a runbook step an answer restates (review finding: rap002's
own fix was rejected as "written for tensorflow").

A step with ``For tensorflow:`` / ``For jax:`` variants gives the same fix in each API. An
answer in the incident's framework's API that shares plain words ("compute the loss from
logits") with another framework's variant is not that variant: the code names it says
(``BCEWithLogitsLoss``, ``from_logits``, ``torch.autocast``) tell which wording it gives, and
with none, the incident's framework's wording is the one it restates. An answer in another
framework's API is still contradicted.
"""

from __future__ import annotations

from typing import Any

import pytest

from rca.evaluation.suite import realworld_dev_cases
from rca.suggestion.premises import read_premises
from rca.suggestion.restated_steps import code_words, restated_step
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

#: A step whose own wording is PyTorch's and whose TensorFlow variant shares plain words with
#: PyTorch answers ("compute the loss", "logits", "sigmoid").
_LOSS_STEPS = (("nan-loss-bad-data", 0.9), ("amp-autocast-unsafe-bce", 0.8))
_TF_NAN = (
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Loss is nan: "
    "tf.debugging.check_numerics found NaN in binary_crossentropy/Log"
)


def _case(case_id: str) -> dict[str, Any]:
    return next(case for case in realworld_dev_cases() if case["id"] == case_id)


def _rap002_answers() -> list[str]:
    case = _case("rap002")
    return [
        case["fix_action"],  # the case's own fix, worded as an LLM would
        "Compute the loss with `torch.nn.BCEWithLogitsLoss` on the logits instead of sigmoid"
        " followed by BCELoss.",
        "Drop the sigmoid on the last layer and compute the loss from the raw logits with"
        " `nn.BCEWithLogitsLoss`.",
        "Compute the loss from the logits instead of the sigmoid's probabilities.",
    ]


@pytest.mark.parametrize("runbook", [slug for slug, _ in _LOSS_STEPS])
@pytest.mark.parametrize("answer", _rap002_answers())
def test_a_pytorch_answer_sharing_words_with_a_tensorflow_variant_passes(
    answer: str, runbook: str
) -> None:
    case = _case("rap002")
    ctx = message_context(case["message"], *_LOSS_STEPS)
    result = validate(draft(answer, runbook, case["fix_reason"]), ctx)
    assert result.premises_ok, result.complaints
    assert not any("written for" in complaint for complaint in result.complaints)


def test_the_tensorflow_wording_is_still_read_for_a_keras_answer() -> None:
    ctx = message_context(_TF_NAN, *_LOSS_STEPS)
    assert read_premises(ctx).frameworks == {"tensorflow"}
    keras = draft(
        "Compute the loss from logits with `BinaryCrossentropy(from_logits=True)` and no"
        " sigmoid on the last layer.",
        "nan-loss-bad-data",
    )
    meta = restated_step(keras, ctx)
    assert meta is not None and meta.api == ("tensorflow",)
    assert validate(keras, ctx).premises_ok


def test_a_pytorch_api_answer_to_a_tensorflow_incident_still_fails() -> None:
    ctx = message_context(_TF_NAN, *_LOSS_STEPS)
    torch = draft(
        "Remove the final sigmoid and compute the loss on the logits with"
        " `torch.nn.BCEWithLogitsLoss`.",
        "amp-autocast-unsafe-bce",
    )
    result = validate(torch, ctx)
    assert not result.premises_ok
    assert any("written for pytorch" in complaint for complaint in result.complaints)


def test_code_words_are_names_not_english() -> None:
    said = code_words(
        "Use `nn.BCEWithLogitsLoss` (e.g. on logits) or from_logits=True in"
        " tf.keras.losses.BinaryCrossentropy."
    )
    assert {"bcewithlogitsloss", "nn", "from_logits", "binarycrossentropy", "tf"} <= said
    assert not {"use", "logits", "e.g", "e", "g", "in", "or"} & said


def test_reading_code_words_is_linear() -> None:
    assert_linear(lambda n: code_words("a.B_c" * n), 50, 700)
