"""An input that has its batch axis and lacks the channel axis is not told to add a batch axis.

A judge's generic harm class (issue 16): "add the batch axis" when the shape in the message
already has its batch axis and the missing one is the channel (feature) axis: a model taking
``(None, H, W, C)`` given ``(None, H, W)`` gets ``(1, None, H, W)``. :mod:`rca.suggestion.
axis_position` reads ``batch-axis-present`` / ``channel-axis-missing``; the batch-axis steps
carry the first in ``unless``, the channel-axis steps ``fit`` the second, and
:mod:`rca.suggestion.checks.leading_axis` fails a leading-axis answer in any wording.
Both directions are tested: a sample without its batch axis still gets the batch-axis step.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rca.suggestion.axis_position import BATCH_PRESENT, CHANNEL_MISSING, axis_position_facts
from rca.suggestion.checks.leading_axis import (
    adds_leading_axis,
    adds_trailing_axis,
    leading_axis_violations,
)
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from tests.support.evidence import message_context
from tests.support.scripted_llm import scripted_llm

KERAS = ("tf-input-shape-batch-dim", 0.9)
CONV = ("conv-channel-mismatch-layout", 0.9)
TRITON = ("triton-input-shape-max-batch-size", 0.9)
ORT = ("onnxruntime-input-shape-type", 0.9)

#: Messages whose input has its batch axis and lacks the channel axis (framework wordings).
CHANNEL_MISSING_MESSAGES = [
    # TF/Keras 2.x expected/found shapes (a grayscale MNIST batch)
    'ValueError: Input 0 of layer "sequential" is incompatible with the layer: expected'
    " shape=(None, 28, 28, 1), found shape=(None, 28, 28)",
    # Keras min_ndim with the full shape (batch as a leading None)
    'ValueError: Input 0 of layer "conv2d" is incompatible with the layer: expected min_ndim=4,'
    " found ndim=3. Full shape received: (None, 28, 28)",
    # TF 2.2 bracket form
    "ValueError: Input 0 of layer conv1d is incompatible with the layer: expected ndim=3, found"
    " ndim=2. Full shape received: [None, 128]",
    # Keras functional model called on a batch without its channel axis
    "WARNING:tensorflow:Model was constructed with shape (None, 64, 64, 1) for input"
    " KerasTensor(type_spec=TensorSpec(shape=(None, 64, 64, 1), dtype=tf.float32,"
    " name='input_1'), name='input_1'), but it was called on an input with incompatible shape"
    " (None, 64, 64).",
    # PyTorch conv2d, old wording: a batch of grayscale images without their channel axis
    "RuntimeError: Expected 4-dimensional input for 4-dimensional weight [32, 1, 3, 3], but got"
    " 3-dimensional input of size [64, 28, 28] instead",
    # PyTorch, space-separated weight sizes
    "RuntimeError: Expected 4-dimensional input for 4-dimensional weight 64 1 4 4, but got"
    " 3-dimensional input of size [128, 256, 256] instead",
    # PyTorch conv2d accepting unbatched input: the batch read as channels
    "RuntimeError: Given groups=1, weight of size [32, 1, 3, 3], expected input[64, 28, 28] to"
    " have 1 channels, but got 64 channels instead",
    # PyTorch conv1d on (N, L) sequences
    "RuntimeError: Given groups=1, weight of size [16, 1, 5], expected input[8, 100] to have 1"
    " channels, but got 8 channels instead",
    # ONNX Runtime rank message plus a message naming the missing axis
    "INVALID_ARGUMENT : Invalid rank for input: input Got: 3 Expected: 4 Please fix either the"
    " inputs or the model. The input is missing the channel dimension.",
]
#: Messages whose input lacks its batch axis (a single sample): the batch step stays right.
BATCH_MISSING_MESSAGES = [
    'ValueError: Input 0 of layer "stem_conv" is incompatible with the layer: expected'
    " min_ndim=4, found ndim=3. Full shape received: (224, 224, 3)",
    "RuntimeError: Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but got"
    " 3-dimensional input of size [3, 224, 224] instead",
    'ValueError: Input 0 of layer "model" is incompatible with the layer: expected'
    " shape=(None, 224, 224, 3), found shape=(224, 224, 3)",
    "RuntimeError: Expected 4-dimensional input for 4-dimensional weight 3 3 1 1, but got"
    " 3-dimensional input of size [3, 256, 256] instead",
]


def _llm(action: str, runbook: str = KERAS[0]) -> Draft:
    return Draft(action, "The model needs that rank.", runbook, 0.8, "openai", "test-llm")


@pytest.mark.parametrize("message", CHANNEL_MISSING_MESSAGES)
def test_the_batch_axis_is_read_as_present(message):
    facts = read_premises(message_context(message)).facts
    assert BATCH_PRESENT in facts and CHANNEL_MISSING in facts, sorted(facts)


@pytest.mark.parametrize("message", BATCH_MISSING_MESSAGES)
def test_a_single_sample_keeps_the_batch_axis_open(message):
    facts = read_premises(message_context(message)).facts
    assert not facts & {BATCH_PRESENT, CHANNEL_MISSING}, sorted(facts)


@pytest.mark.parametrize(
    "message",
    [
        # two axes missing: the batch is there, but which other axis is not said
        'ValueError: Input 0 of layer "conv2d" is incompatible with the layer: expected'
        " min_ndim=4, found ndim=2. Full shape received: (None, 784)",
    ],
)
def test_two_missing_axes_rule_out_the_batch_step_only(message):
    facts = axis_position_facts(message)
    assert facts == {BATCH_PRESENT}


def test_readings_that_disagree_claim_nothing():
    message = CHANNEL_MISSING_MESSAGES[0] + "\n" + BATCH_MISSING_MESSAGES[2]
    assert axis_position_facts(message) == set()


def test_all_unknown_sizes_say_nothing():
    message = (
        'ValueError: Input 0 of layer "lstm" is incompatible with the layer: expected ndim=3,'
        " found ndim=2. Full shape received: (None, None)"
    )
    assert axis_position_facts(message) == set()


@pytest.mark.parametrize(
    ("message", "runbook"),
    [
        (CHANNEL_MISSING_MESSAGES[0], KERAS),
        (CHANNEL_MISSING_MESSAGES[1], KERAS),
        (CHANNEL_MISSING_MESSAGES[2], KERAS),
        (CHANNEL_MISSING_MESSAGES[4], CONV),
        (CHANNEL_MISSING_MESSAGES[5], CONV),
        (CHANNEL_MISSING_MESSAGES[6], CONV),
    ],
)
def test_the_channel_step_is_the_action(message, runbook):
    ctx = message_context(message, runbook)
    suggestion = OfflineProvider().suggest(ctx)
    action = suggestion.action
    assert not adds_leading_axis(action) or adds_trailing_axis(action), action
    assert "channel" in action.lower() or "feature" in action.lower(), action
    assert validate(suggestion, ctx).ok


@pytest.mark.parametrize(
    ("message", "runbook"),
    [
        (CHANNEL_MISSING_MESSAGES[0], KERAS),
        (CHANNEL_MISSING_MESSAGES[3], KERAS),
        (CHANNEL_MISSING_MESSAGES[4], CONV),
        (CHANNEL_MISSING_MESSAGES[1], TRITON),
        (CHANNEL_MISSING_MESSAGES[8], ORT),
    ],
)
def test_no_candidate_step_adds_only_a_batch_axis(message, runbook):
    actions = [c.action for c in rank_steps(message_context(message, runbook))]
    assert actions
    assert not [a for a in actions if adds_leading_axis(a) and not adds_trailing_axis(a)]


@pytest.mark.parametrize(
    ("message", "runbook"),
    [
        (BATCH_MISSING_MESSAGES[2], KERAS),
        (BATCH_MISSING_MESSAGES[1], CONV),
        (BATCH_MISSING_MESSAGES[3], CONV),
    ],
)
def test_a_single_sample_still_gets_the_batch_axis_step(message, runbook):
    suggestion = OfflineProvider().suggest(message_context(message, runbook))
    assert adds_leading_axis(suggestion.action), suggestion.action


@pytest.mark.parametrize(
    ("action", "harmful"),
    [
        ("Add the batch axis with `np.expand_dims(x, 0)` before `model.predict`.", True),
        ("Use `x[None, ...]` so the model gets a batch of one.", True),
        ("Call `images.unsqueeze(0)` before the model.", True),
        ("Insert a leading batch dimension: `tf.expand_dims(x, axis=0)`.", True),
        ("Wrap the input as a batch of one (`x[np.newaxis, ...]`).", True),
        ("Add the channel axis with `x[..., np.newaxis]`.", False),
        ("Use `np.expand_dims(x, -1)` so the batch is (N, 28, 28, 1).", False),
        ("Add the missing channel dimension with `x.unsqueeze(1)`.", False),
        ("Reshape the input to `(-1, 28, 28, 1)` before `fit`.", False),
    ],
)
def test_an_llm_answer_adding_a_batch_axis_fails_validation(action, harmful):
    for message, runbook in (
        (CHANNEL_MISSING_MESSAGES[1], KERAS),
        (CHANNEL_MISSING_MESSAGES[4], CONV),
    ):
        check = validate(_llm(action, runbook[0]), message_context(message, runbook))
        assert (not check.premises_ok) == harmful, (message, check.complaints)
        if harmful:
            assert any("do not add a batch" in c for c in check.complaints)


def test_the_same_answer_passes_for_a_single_sample():
    ctx = message_context(BATCH_MISSING_MESSAGES[0], KERAS)
    assert validate(_llm("Add the batch axis with `np.expand_dims(x, 0)`."), ctx).premises_ok


def test_an_llm_adding_a_batch_axis_is_reasked_and_the_channel_kept(httpserver):
    answers = [
        {
            "action": "Add the batch axis for single samples (`np.expand_dims(x, 0)`).",
            "reason": "Keras models take batches.",
            "runbook": KERAS[0],
            "confidence": 0.8,
        },
        {
            "action": "Add the channel axis with `x[..., None]` so images are (N, 28, 28, 1).",
            "reason": "The batch axis is there; Conv2D needs a channel axis.",
            "runbook": KERAS[0],
            "confidence": 0.7,
        },
    ]
    provider, requests = scripted_llm(httpserver, *answers)
    outcome = write_suggestion(message_context(CHANNEL_MISSING_MESSAGES[1], KERAS), provider)
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert outcome.draft.action == answers[1]["action"] and outcome.validation.ok


# --------------------------------------------------------------------------- properties

_size = st.integers(min_value=2, max_value=512)


@given(sizes=st.lists(_size, min_size=1, max_size=5), channels=st.integers(1, 4))
def test_keras_shapes_missing_the_last_axis_are_channel_missing(sizes, channels):
    expected = ", ".join(["None", *map(str, sizes), str(channels)])
    found = ", ".join(["None", *map(str, sizes)])
    message = f"expected shape=({expected}), found shape=({found})"
    assert CHANNEL_MISSING in axis_position_facts(message)


@given(sizes=st.lists(_size, min_size=2, max_size=4))
def test_a_sample_missing_its_batch_axis_never_reads_as_present(sizes):
    expected = ", ".join(["None", *map(str, sizes)])
    found = ", ".join(map(str, sizes))
    assert axis_position_facts(f"expected shape=({expected}), found shape=({found})") == set()


@given(
    weight_in=st.integers(1, 4),
    first=st.integers(1, 512),
    last=st.integers(1, 512),
)
def test_torch_conv_rule(weight_in, first, last):
    message = (
        f"Expected 4-dimensional input for 4-dimensional weight [8, {weight_in}, 3, 3], but got"
        f" 3-dimensional input of size [{first}, 32, {last}] instead"
    )
    present = first != weight_in and last != weight_in
    assert (CHANNEL_MISSING in axis_position_facts(message)) == present


@given(
    st.text(
        alphabet=st.sampled_from(list("expectd shape=(None,0123)[]foundFulwigh")), max_size=3000
    )
)
def test_arbitrary_text_never_raises(text):
    axis_position_facts(text)
    leading_axis_violations(text, {BATCH_PRESENT})


def _seconds(piece: str, size: int) -> float:
    text = (piece * (size // len(piece) + 1))[:size]
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        axis_position_facts(text)
        leading_axis_violations(text, {BATCH_PRESENT})
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize(
    "piece",
    [
        "expected shape=(None, 1, 2, ",
        "Full shape received: (None, 2",
        "weight of size [1, 2, 3, 3], expected input[1, 2, ",
        "-dimensional input for 4-dimensional weight 1 2 3 ",
        "expand_dims(x, add the new missing leading batch [None, [..., None",
        "missing the channel missing feature ",
    ],
)
def test_reading_is_linear_in_adversarial_text(piece):
    small, large = _seconds(piece, 5_000), _seconds(piece, 200_000)
    assert large < max(1.0, 60 * small), (small, large)
