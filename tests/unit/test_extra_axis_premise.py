"""An input with one axis too many must not be told to add one (issue 16 items 2, 3 and 7).

"Add the batch axis (``np.expand_dims(x, 0)``)" fits a rank mismatch whose input lacks an
axis; when the message shows the input already has MORE axes than the layer accepts
("expected ndim=4, found ndim=5"), it makes the mismatch worse. :mod:`rca.suggestion.
rank_direction` reads the direction as ``input-has-extra-axis``; steps that add an axis carry
it in ``unless``, steps that drop one in ``fits``; :mod:`rca.suggestion.checks.added_axis`
fails an axis-adding answer in any wording, offline or from an LLM.

The messages below are from public issue threads (their links beside them), as posted.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.parsing.shapes import extract_shape_diff
from rca.suggestion.checks.added_axis import added_axis_violations, adds_axis, removes_axis
from rca.suggestion.context import AnalysisContext
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.rank_direction import EXTRA_AXIS, LACKS_AXIS, rank_facts
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from tests.support.evidence import evidence
from tests.support.scripted_llm import scripted_llm

KERAS = ("tf-input-shape-batch-dim", 0.9)
CONV = ("conv-channel-mismatch-layout", 0.9)
ORT = ("onnxruntime-input-shape-type", 0.9)

#: (message as posted, whether the input has an axis too many)
PUBLIC = [
    # github.com/frankkramer-lab/MIScnn/issues/110 (2-D code on 3-D data)
    (
        'ValueError: Input 0 of layer "batch_normalization" is incompatible with the layer:'
        " expected ndim=4, found ndim=5. Full shape received: (None, None, None, None, 32)",
        True,
    ),
    # github.com/tensorflow/tensorflow/issues/50142 (np.newaxis on an already 4-D batch)
    (
        "ValueError: Input 0 of layer max_pooling2d is incompatible with the layer: expected"
        " ndim=4, found ndim=5. Full shape received: (None, None, None, None, 16)",
        True,
    ),
    # github.com/keras-team/keras/issues/10903 (Keras 2 wording, no full shape)
    (
        "ValueError: Input 0 is incompatible with layer conv2d_1: expected ndim=4, found ndim=5",
        True,
    ),
    # github.com/Sentdex/pygta5/issues/148 (TF 2.2 bracket form; one axis short)
    (
        "ValueError: Input 0 of layer sequential is incompatible with the layer: expected"
        " ndim=4, found ndim=3. Full shape received: [32, 270, 3]",
        False,
    ),
    # github.com/BBillot/SynthSeg/issues/78
    (
        "ValueError: Error when checking input: expected labels_input to have 4 dimensions, but"
        " got array with shape (1, 232, 256, 10, 1)",
        True,
    ),
    # github.com/jinlanfu/NERmultimodal/issues/8
    (
        "Exception: Error when checking model input: expected input_3 to have 5 dimensions, but"
        " got array with shape (4000, 1)",
        False,
    ),
    # github.com/VisionRush/DeepFakeDefenders/issues/30 (stack(...).unsqueeze(0) on a batch)
    (
        "RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input"
        " of size: [1, 6, 6, 512, 512]",
        True,
    ),
    # github.com/amir-aghdam/3D-UNet/issues/5
    (
        "RuntimeError: Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input"
        " of size: [1, 1, 16, 240, 240, 160]",
        True,
    ),
    # github.com/CGCL-codes/AdvCLIP/issues/3 (a squeeze too many: an axis short)
    (
        "RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input"
        " of size: [32, 1024]",
        False,
    ),
    # github.com/leizhang-geo/ST-CausalConvNet/issues/1
    (
        "RuntimeError: Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input"
        " of size: [32, 24, 1, 12]",
        True,
    ),
    # github.com/miraclewkf/ResNeXt-PyTorch/issues/5
    (
        "RuntimeError: Expected 4-dimensional input for 4-dimensional weight 64 3 7 7"
        " 94387354416688, but got 5-dimensional input of size [6, 3, 3, 224, 224] instead",
        True,
    ),
    # github.com/kenshohara/3D-ResNets-PyTorch/issues/92 (BatchNorm2d on clips)
    ("ValueError: expected 4D input (got 5D input)", True),
    # github.com/keras-team/autokeras/issues/475
    ("ValueError: expected 2D or 3D input (got 4D input)", True),
    # github.com/weijielyu/Gaga/issues/23
    ("ValueError: expected 4D input (got 3D input)", False),
    # github.com/microsoft/onnxruntime/issues/27654
    (
        "[ERROR] ORT Estimate exception: Invalid rank for input: input Got: 4 Expected: 5"
        " Please fix either the inputs/outputs or the model.",
        False,
    ),
    # github.com/microsoft/onnxruntime/issues/16557
    (
        "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Invalid rank for input: input Got: 4"
        " Expected: 2 Please fix either the inputs or the model.",
        True,
    ),
    # the check in jax/_src/lax/convolution.py: input (lhs) and kernel (rhs) ranks
    (
        "ValueError: conv_general_dilated lhs and rhs must have the same number of dimensions,"
        " but got (8, 1, 28, 28, 1) and (3, 3, 1, 32).",
        True,
    ),
    (
        "ValueError: conv_general_dilated lhs and rhs must have the same number of dimensions,"
        " but got (28, 28, 1) and (3, 3, 1, 32).",
        False,
    ),
]


def _ctx(message: str, *ranked: tuple[str, float]) -> AnalysisContext:
    return AnalysisContext(
        error_type=message.split(":", 1)[0],
        message=message,
        shape_diff=extract_shape_diff(message),
        evidence=evidence(*ranked),
    )


def _llm(action: str, runbook: str = KERAS[0]) -> Draft:
    return Draft(action, "The layer needs that rank.", runbook, 0.8, "openai", "test-llm")


@pytest.mark.parametrize(("message", "extra"), PUBLIC)
def test_public_wordings_give_the_direction(message, extra):
    facts = read_premises(_ctx(message)).facts
    assert (EXTRA_AXIS in facts) == extra and (LACKS_AXIS in facts) == (not extra)


def test_two_readings_that_disagree_claim_nothing():
    message = PUBLIC[0][0] + "\n" + PUBLIC[3][0]
    assert not rank_facts(message, extract_shape_diff(message))


def test_no_other_rank_fact_contradicts_it():
    message = PUBLIC[0][0]
    facts = read_premises(_ctx(message)).facts
    assert not facts & {"batch-axis-missing", "trailing-axis-missing"}


@pytest.mark.parametrize(
    ("message", "runbook", "words"),
    [
        (PUBLIC[1][0], KERAS, ("extra axis", "squeeze")),
        (PUBLIC[6][0], CONV, ("squeeze",)),
    ],
)
def test_an_extra_axis_gets_a_step_that_drops_it(message, runbook, words):
    ctx = _ctx(message, runbook)
    suggestion = OfflineProvider().suggest(ctx)
    assert not adds_axis(suggestion.action) or removes_axis(suggestion.action), suggestion.action
    assert any(word in suggestion.action for word in words), suggestion.action
    assert validate(suggestion, ctx).ok


def test_onnx_runtime_ranks_its_squeeze_step_above_the_one_that_adds():
    """The runbook's first steps (dynamic axes, dtypes) still rank above its rank steps by
    their place; of the rank steps, the one that drops the axis is the candidate."""
    ctx = _ctx(PUBLIC[15][0], ORT)
    actions = [c.action for c in rank_steps(ctx)]
    assert any("np.squeeze(x, axis=0)" in a for a in actions)
    assert not any(adds_axis(a) and not removes_axis(a) for a in actions), actions
    assert validate(OfflineProvider().suggest(ctx), ctx).ok


@pytest.mark.parametrize(
    ("message", "runbook"),
    [
        (
            'ValueError: Input 0 of layer "stem_conv" is incompatible with the layer: expected'
            " min_ndim=4, found ndim=3. Full shape received: (224, 224, 3)",
            KERAS,
        ),
        (
            "RuntimeError: Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7],"
            " but got 3-dimensional input of size [3, 224, 224] instead",
            CONV,
        ),
    ],
)
def test_a_missing_axis_still_gets_the_step_that_adds_it(message, runbook):
    suggestion = OfflineProvider().suggest(_ctx(message, runbook))
    assert adds_axis(suggestion.action), suggestion.action


@pytest.mark.parametrize(
    ("action", "harmful"),
    [
        ("Add the batch axis with `np.expand_dims(x, 0)` before `model.predict`.", True),
        ("Use `x[None, ...]` so the model gets a batch of one.", True),
        ("Add a leading batch dimension to the images.", True),
        ("Call `images.unsqueeze(0)` before the model.", True),
        ("Add the channel axis with `x[..., np.newaxis]`.", True),
        ("Remove the extra axis with `np.squeeze(x, axis=0)` instead of `np.expand_dims`.", False),
        ("Stop batching the dataset twice: drop the `.batch(32)` before `fit`.", False),
        ("Use `Conv3D` layers for the volumes.", False),
    ],
)
def test_an_llm_answer_adding_an_axis_fails_validation(action, harmful):
    ctx = _ctx(PUBLIC[1][0], KERAS)
    check = validate(_llm(action), ctx)
    assert (not check.premises_ok) == harmful, check.complaints
    if harmful:
        assert any("do not add an axis" in c for c in check.complaints)


def test_the_same_answer_passes_when_an_axis_is_missing():
    ctx = _ctx(PUBLIC[3][0], KERAS)
    assert validate(_llm("Add the batch axis with `np.expand_dims(x, 0)`."), ctx).premises_ok


def test_an_llm_that_adds_an_axis_is_reasked_and_the_squeeze_kept(httpserver):
    """Issue 16 item 7 against a local OpenAI-protocol server."""
    answers = [
        {
            "action": "Add the batch axis for single samples (`np.expand_dims(x, 0)`).",
            "reason": "Keras models take batches.",
            "runbook": KERAS[0],
            "confidence": 0.8,
        },
        {
            "action": "Drop the extra axis with `np.squeeze(x, axis=0)` before `predict`.",
            "reason": "The input already has one axis more than the layer takes.",
            "runbook": KERAS[0],
            "confidence": 0.7,
        },
    ]
    provider, requests = scripted_llm(httpserver, *answers)
    outcome = write_suggestion(_ctx(PUBLIC[1][0], KERAS), provider)
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert outcome.draft.action == answers[1]["action"] and outcome.validation.ok


# --------------------------------------------------------------------------- properties

_ranks = st.integers(min_value=1, max_value=9)
_dim = st.one_of(st.integers(min_value=1, max_value=4096).map(str), st.just("None"))

#: Wordings that state both ranks as numbers: template, and how (accepted, found) fill it.
_COUNTS = [
    'Input 0 of layer "d" is incompatible with the layer: expected ndim={a}, found ndim={f}.',
    "ValueError: Input 0 is incompatible with layer c: expected max_ndim={a}, found ndim={f}",
    "Invalid rank for input: x Got: {f} Expected: {a} Please fix either the inputs or the model.",
    "Expected {a}-dimensional input for {a}-dimensional weight [8, 3, 3, 3], but got"
    " {f}-dimensional input of size [1] instead",
    "ValueError: expected {a}D input (got {f}D input)",
    "RuntimeError: input must have {a} dimensions, got {f}",
]
#: Wordings that state the found rank as a shape.
_SHAPES = [
    "expected input_1 to have {a} dimensions, but got array with shape ({dims})",
    "Expected {lo}D (unbatched) or {a}D (batched) input to conv2d, but got input of size: [{dims}]",
    "Expected {lo}D or {a}D (batch mode) tensor with optional 0 dim batch size for input, but"
    " got:[{dims}]",
]


@given(a=_ranks, f=_ranks, which=st.integers(0, len(_COUNTS) - 1))
def test_the_fact_holds_iff_found_rank_is_above_the_accepted_one(a, f, which):
    message = _COUNTS[which].format(a=a, f=f)
    facts = rank_facts(message, extract_shape_diff(message))
    assert (EXTRA_AXIS in facts) == (f > a) and (LACKS_AXIS in facts) == (f < a)


@given(a=st.integers(2, 9), dims=st.lists(_dim, min_size=1, max_size=9), which=st.integers(0, 2))
def test_the_fact_holds_iff_a_shape_has_more_axes(a, dims, which):
    message = _SHAPES[which].format(a=a, lo=a - 1, dims=", ".join(dims))
    facts = rank_facts(message)
    lowest = a if which == 0 else a - 1  # "3D (unbatched) or 4D (batched)" accepts both
    assert (EXTRA_AXIS in facts) == (len(dims) > a)
    assert (LACKS_AXIS in facts) == (len(dims) < lowest)


@given(
    expected=st.lists(_dim, min_size=1, max_size=8), found=st.lists(_dim, min_size=1, max_size=8)
)
def test_keras_shapes_and_jax_ranks_compare_lengths(expected, found):
    keras = f"expected shape=({', '.join(expected)}), found shape=({', '.join(found)})"
    jax = (
        "conv_general_dilated lhs and rhs must have the same number of dimensions, but got"
        f" ({', '.join(found)}) and ({', '.join(expected)})."
    )
    for message in (keras, jax):
        assert (EXTRA_AXIS in rank_facts(message)) == (len(found) > len(expected))


@given(
    st.text(
        alphabet=st.sampled_from(list("expectd ndim=found,0123456789()[]DN:GotE")), max_size=3000
    )
)
def test_arbitrary_text_never_raises(text):
    rank_facts(text)
    added_axis_violations(text, {EXTRA_AXIS})


def _seconds(piece: str, size: int) -> float:
    text = (piece * (size // len(piece) + 1))[:size]
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        rank_facts(text)
        added_axis_violations(text, {EXTRA_AXIS})
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize(
    "piece",
    [
        "expected ndim=4, found ndim=",
        "expected shape=(None, 1, 2, ",
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [1, ",
        "constructed with shape (None, 3) for input x, ",
        "lhs and rhs must have the same number of dimensions, but got (1, 2",
        "Invalid rank for input: " + "x" * 50,
        "add the new missing leading [None, [..., None",
    ],
)
def test_reading_is_linear_in_adversarial_text(piece):
    small, large = _seconds(piece, 5_000), _seconds(piece, 200_000)
    # 40x the text; a backtracking engine on these nested repeats would take seconds.
    assert large < max(1.0, 60 * small), (small, large)
