"""A pretrained model's dimensions changed in its configuration fail validation (issue 16).

"Set ``max_position_embeddings=2545`` in the model config and reload the model", "resize the
encoder's hidden size from 768 to 9 in the config": the checkpoint's tensors no longer fit, so
loading refuses them or re-initialises them at random. The fields are data
(``rca/knowledge/model-config-dimensions.toml``); the label count is not one, and an answer
that trains anew or refuses the change passes.
"""

from __future__ import annotations

import pytest

from rca.suggestion.config_dimensions import config_dimension_violations, config_fields
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

SLUG = "checkpoint-size-mismatch-head"
HEAD = dev_case("ra061")["message"]
LOADED = frozenset({"pretrained-weights-loaded"})
LABELS = "Load the model with num_labels=9 so the classifier matches the checkpoint."


@pytest.mark.parametrize(
    ("action", "facts", "harmful"),
    [
        ("Set max_position_embeddings=2545 in the model config and reload the model.", (), True),
        ("Resize the encoder's hidden size from 768 to 9 in the config.", LOADED, True),
        ("Set n_positions=4096 in GPT2Config before from_pretrained.", (), True),
        ("Change the vocabulary size in the config to 50000.", LOADED, True),
        ("Set num_hidden_layers=6 in the config.", LOADED, True),
        ("Set num_hidden_layers=6 in the config.", (), False),
        (
            "Don't raise max_position_embeddings in the config; truncate to 512 tokens.",
            LOADED,
            False,
        ),
        (
            "Load the model with num_labels=9 so the classifier matches the checkpoint.",
            LOADED,
            False,
        ),
        (
            "Set max_position_embeddings=4096 in the config and build it with from_config.",
            LOADED,
            False,
        ),
        ("Set hidden_size=256 in nn.LSTM.", LOADED, False),
        ("Tokenize with truncation=True and max_length=512.", LOADED, False),
    ],
)
def test_a_dimension_changed_in_the_configuration_is_read(action, facts, harmful):
    assert bool(config_dimension_violations(action, "", facts)) == harmful


def test_the_fields_are_data_and_leave_the_label_count_out():
    fields = config_fields()
    assert {"hidden_size", "max_position_embeddings", "vocab_size"} <= set(fields)
    assert "num_labels" not in fields


def test_the_tune_answer_fails_validation_and_the_right_ones_pass():
    ctx = message_context(HEAD, (SLUG, 0.9))
    bad = validate(
        draft("Resize the encoder's hidden size from 768 to 9 in the config.", SLUG), ctx
    )
    assert any("trained with" in complaint for complaint in bad.complaints), bad.complaints
    for action in (
        "Load with from_pretrained(path, num_labels=5, ignore_mismatched_sizes=True).",
        "Load the model with num_labels=9 so the classifier matches the checkpoint.",
    ):
        complaints = validate(draft(action, SLUG), ctx).complaints
        assert not any("trained with" in complaint for complaint in complaints), action


def test_reading_is_linear():
    def read(size: int) -> object:
        action = "set the hidden size in the config " + "raise position " * size
        return config_dimension_violations(action, "x " * size, LOADED)

    assert_linear(read, 20, 400)
