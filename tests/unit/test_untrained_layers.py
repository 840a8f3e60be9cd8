"""A non-strict load is no fix when the message lists learned weights as missing (issue 16).

PyTorch's ``load_state_dict(strict=False)`` raises nothing for missing keys: it returns them
and leaves those parameters at the constructor's random values. When the message's
"Missing key(s)" list holds weights and biases, "load with strict=False" reports success and
leaves those layers untrained, unless the answer says they are new layers meant to be trained
(a head added for fine-tuning). Buffers repeated across layers are the harmless case; a prefix
on every key has its own complaint (:mod:`rca.suggestion.prefix_shift`).
"""

from __future__ import annotations

import pytest

from rca.suggestion.untrained_layers import missing_layer_violations
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

SLUG = "checkpoint-keys-module-prefix"
GPT = dev_case("rk006")["message"]
#: Other names in PyTorch's wording.
RESNET = (
    "RuntimeError: Error(s) in loading state_dict for ResNet:\n"
    '\tMissing key(s) in state_dict: "layer4.0.conv1.weight", "layer4.0.bn1.weight",'
    ' "layer4.0.bn1.bias", "fc.weight", "fc.bias".'
)
BUFFERS = (
    "RuntimeError: Error(s) in loading state_dict for Net:\n"
    '\tMissing key(s) in state_dict: "bn1.num_batches_tracked", "bn2.num_batches_tracked".'
)
EXTRA_ONLY = (
    "RuntimeError: Error(s) in loading state_dict for Net:\n"
    '\tUnexpected key(s) in state_dict: "aux_head.weight", "aux_head.bias".'
)


@pytest.mark.parametrize(
    ("message", "action", "reason", "harmful"),
    [
        (GPT, "Load the checkpoint with strict=False to ignore the missing keys.", "", True),
        (RESNET, "Call model.load_state_dict(sd, strict=False).", "Skips them.", True),
        (RESNET, "Ignore the missing keys and load the rest.", "", True),
        (
            RESNET,
            "Load with strict=False and fine-tune the model.",
            "layer4 and fc are new layers added for the task and are trained from scratch.",
            False,
        ),
        (RESNET, "Load with strict=False; the fc head is newly initialised.", "", False),
        (BUFFERS, "Load the checkpoint with strict=False.", "", False),
        (EXTRA_ONLY, "Load the checkpoint with strict=False.", "", False),
        (
            GPT,
            "Strip the '_orig_mod.' prefix from the saved keys before load_state_dict.",
            "",
            False,
        ),
        (GPT, "Keep strict=True and save model._orig_mod.state_dict() instead.", "", False),
    ],
)
def test_a_non_strict_load_over_missing_learned_weights_is_read(message, action, reason, harmful):
    assert bool(missing_layer_violations(action, reason, message)) == harmful


def test_the_tune_answer_fails_validation_and_the_right_ones_pass():
    ctx = message_context(GPT, (SLUG, 0.9))
    bad = validate(
        draft("Load the checkpoint with strict=False to ignore the missing keys.", SLUG), ctx
    )
    assert not bad.ok
    assert any("random initialisation" in complaint for complaint in bad.complaints)
    for action in (
        "Strip the '_orig_mod.' prefix from the saved keys before load_state_dict.",
        "Save model._orig_mod.state_dict() instead of the compiled model's state_dict.",
    ):
        assert validate(draft(action, SLUG), ctx).premises_ok, action


def test_reading_is_linear():
    def read(size: int) -> object:
        message = 'Missing key(s) in state_dict: "' + '", "'.join(["a.weight"] * size) + '".'
        return missing_layer_violations("strict=False " * size, "new " * size, message)

    assert_linear(read, 20, 400)
