"""Facts read alike whatever a client calls the op, and the two facts that tell a label's or a
loss's failure apart: what each says, what it must not claim, and bounded on any text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.shape_ops import op_kind
from rca.suggestion.incident_facts import incident_facts
from rca.suggestion.label_values import NEGATIVE, NOT_NEGATIVE, label_facts
from rca.suggestion.loss_trend import DIVERGING, loss_trend_facts

GRAYSCALE = (
    "Given groups=1, weight of size [16, 3, 3, 3], expected input[8, 1, 64, 64] to have 3"
    " channels, but got 1 channels instead"
)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("conv", "conv"),
        ("conv2d", "conv"),
        ("Conv2D", "conv"),
        ("nn.Conv2d", "conv"),
        ("torch.nn.functional.conv1d", "conv"),
        ("conv_transpose2d", "conv"),
        ("tf.keras.layers.Conv3D", "conv"),
        ("linear", "matmul"),
        ("nn.Linear", "matmul"),
        ("F.linear", "matmul"),
        ("Dense", "matmul"),
        ("torch.bmm", "matmul"),
        ("load_state_dict", "load_state_dict"),
        ("input", "input"),
        ("embedding", "embedding"),
        ("", ""),
    ],
)
def test_a_client_named_op_reads_as_the_parsers_kind(name, kind):
    assert op_kind(name) == kind


def test_ops_that_are_not_short_strings_name_no_kind():
    assert op_kind(None) == "" and op_kind(3) == "" and op_kind("conv" * 40) == ""


@pytest.mark.parametrize("op", ["conv", "conv2d", "Conv2D", "nn.Conv2d"])
def test_a_grayscale_batch_is_grayscale_whatever_the_client_calls_the_conv(op):
    diff = {"tensor": "images", "op": op, "expected": [8, 3, 64, 64], "actual": [8, 1, 64, 64]}
    facts = incident_facts(GRAYSCALE, [diff])
    assert "grayscale-input" in facts and "channels-last-input" not in facts


def test_a_channels_last_batch_is_channels_last_under_a_client_name():
    diff = {"op": "conv2d", "expected": [8, 3, 224, 224], "actual": [8, 224, 224, 3]}
    assert "channels-last-input" in incident_facts("", [diff])


@pytest.mark.parametrize(
    ("line", "fact"),
    [
        ("IndexError: Target 10 is out of bounds.", NOT_NEGATIVE),
        ("IndexError: Target -100 is out of bounds.", NEGATIVE),
        ("IndexError: Target -1 is out of bounds.", NEGATIVE),
        (
            "Received a label value of 48 which is outside the valid range of [0, 40).",
            NOT_NEGATIVE,
        ),
        ("Received a label value of -1 which is outside the valid range of [0, 5).", NEGATIVE),
    ],
)
def test_the_label_a_message_names_says_which_kind_is_out_of_range(line, fact):
    assert label_facts([line]) == {fact}


def test_lines_naming_both_kinds_or_none_claim_nothing():
    both = ["Target 10 is out of bounds.", "Target -100 is out of bounds."]
    assert label_facts(both) == set()
    assert label_facts(["Assertion `t >= 0 && t < n_classes` failed."]) == set()


def _steps(*losses: str) -> list[str]:
    return [f"step {i} loss {loss} lr 0.5" for i, loss in enumerate(losses)]


@pytest.mark.parametrize(
    "logs",
    [
        _steps("1410", "1.44e+07", "2.037e+11", "4.84e+15"),
        ["epoch 1 loss=0.9", "epoch 2 loss=12.5", "epoch 3 loss=380.2"],
        ["{'loss': 2.1, 'grad_norm': 3.0}", "{'loss': 40.0}", "{'loss': 9000.5}"],
    ],
)
def test_a_loss_rising_by_orders_of_magnitude_is_diverging(logs):
    assert loss_trend_facts(logs) == {DIVERGING}


@pytest.mark.parametrize(
    "logs",
    [
        _steps("2.3", "1.9", "1.4", "nan"),  # falling, then NaN at once: a bad batch
        _steps("2.3", "2.4", "2.5"),  # rising, but no divergence
        _steps("5", "5000"),  # two values are no trend
        _steps("1", "500", "300", "90000"),  # not rising at every step
        ["val_loss 1", "val_loss 100", "val_loss 10000"],  # another metric
    ],
)
def test_other_loss_logs_are_not_called_diverging(logs):
    assert loss_trend_facts(logs) == set()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=20))
def test_any_text_gives_a_known_fact_or_none(lines):
    assert label_facts(lines) <= {NEGATIVE, NOT_NEGATIVE}
    assert loss_trend_facts(lines) <= {DIVERGING}
    assert isinstance(op_kind(lines[0] if lines else ""), str)


def test_a_megabyte_of_loss_lines_is_read_in_bounded_lines():
    logs = ["loss 1 " * 100_000] + _steps(*(str(10**i) for i in range(2000)))
    assert loss_trend_facts(logs) in (set(), {DIVERGING})
