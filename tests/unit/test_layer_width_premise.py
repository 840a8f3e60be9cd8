"""A matmul's shapes can say the input is wrong, not the layer (issue 16 items 2, 3 and 7).

"mat1 and mat2 shapes cannot be multiplied (BxK1 and K2xN)" invites "set ``in_features`` to
K1". That is harmful when the input's values are each sample's K2 features folded into the
row axis (K1 == 1, B a multiple of K2: flatten keeping the batch axis), or when the whole
input is smaller than one row of a much wider layer that nothing shows the user built
(another tensor, or the wrong axis). :mod:`rca.suggestion.layer_width` reads those facts from
the parsed shapes and the frames; the resizing steps carry ``layer-resize-unsupported`` in
``unless``; :mod:`rca.suggestion.checks.layer_resize` fails the same action in any wording.

The shapes below come from public threads about this error (their fix in the comment); an
old-format message (``size mismatch, m1: [6 x 1], m2: [6 x 1]``) is written in today's wording.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.parsing.frames import make_frame
from ingest.parsing.shapes import ShapeDiff, extract_shape_diff
from rca.suggestion.checks.layer_resize import changes_layer_width, resize_violations
from rca.suggestion.context import AnalysisContext
from rca.suggestion.layer_width import (
    BUILT,
    FOLDED,
    MUCH_WIDER,
    SMALLER,
    UNSUPPORTED,
    layer_width_facts,
)
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from tests.support.evidence import evidence
from tests.support.frames import LIBRARY_FORWARD, USER_FORWARD
from tests.support.scripted_llm import scripted_llm

MATMUL = "RuntimeError: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})"
RUNBOOKS = (
    ("matmul-shape-mismatch-linear", 0.9),
    ("matmul-shape-mismatch-incompatible-components", 0.85),
)

#: (rows, width, layer width, out, facts expected): shapes from public threads.
PUBLIC = [
    # wenku.csdn.net/answer/p9998bsqf8: a GAN's noise (1600x1) into Linear(100, 256); fix:
    # noise.view(noise.size(0), -1).
    (1600, 1, 100, 256, {FOLDED, UNSUPPORTED}),
    # pytorch/examples#564: a sample written as a column [[3.0], [1.0], ...] into Linear(6, 36)
    # ("size mismatch, m1: [6 x 1], m2: [6 x 1]"); the fix passes it as one row of six.
    (6, 1, 6, 36, {FOLDED, UNSUPPORTED}),
    # pytorch/examples#198: x of shape [32 x 1] into the regression example's Linear(4, 1),
    # which takes four polynomial features of each x.
    (32, 1, 4, 1, {FOLDED, UNSUPPORTED}),
    # purbayankar/HybridSN-pytorch#3: 2x64 into a classifier built for 18496 features.
    (2, 64, 18496, 256, {SMALLER, UNSUPPORTED}),
    # nesl/asvspoof2019#9: 32x32 into Linear(480, 128); the maintainers confirm that setting
    # the layer to 32 inputs is a right fix: nothing here says otherwise.
    (32, 32, 480, 128, set()),
    # udacity/deep-learning-v2-pytorch#396: 3584x7 into VGG's 25088-wide classifier (a
    # missing batch axis: same elements, another rank, read by same-elements-other-rank).
    (3584, 7, 25088, 4096, set()),
    # Kim-Hammar/gym-idsgame#10: 1x44 into a 30-wide layer (more features than expected).
    (1, 44, 30, 64, set()),
    # androidkt.com tutorial: a CNN's 2x1568 into a hand-written Linear(1050, 10).
    (2, 1568, 1050, 10, set()),
]

#: The shapes of existing fixtures and runbook symptom lines: none may gain a fact.
FIXTURES = [
    (4, 256, 512, 10),
    (256, 4096, 768, 320),
    (1, 2, 3, 4),
    (8, 4096, 768, 320),
    (64, 9216, 4096, 10),
    (32, 12544, 9216, 128),
    (77, 2048, 768, 320),
    (64, 256, 512, 10),
    (32, 4096, 768, 10),
]


def _message(rows: int, width: int, need: int, out: int) -> str:
    return MATMUL.format(rows, width, need, out)


def _ctx(message: str, frames: list[Any] | None = None) -> AnalysisContext:
    return AnalysisContext(
        error_type="RuntimeError",
        message=message,
        shape_diff=extract_shape_diff(message),
        frames=frames or [],
        evidence=evidence(*RUNBOOKS),
    )


def _facts(message: str, frames: list[Any] | None = None) -> frozenset[str]:
    return read_premises(_ctx(message, frames)).facts & {FOLDED, SMALLER, BUILT, UNSUPPORTED}


def _diff(rows: int, width: int, need: int, op: str = "matmul") -> ShapeDiff:
    return ShapeDiff(tensor=None, op=op, expected=[None, need], actual=[rows, width])


@pytest.mark.parametrize(("rows", "width", "need", "out", "expected"), PUBLIC)
def test_facts_of_public_shapes(rows, width, need, out, expected):
    assert _facts(_message(rows, width, need, out)) == expected


@pytest.mark.parametrize(("rows", "width", "need", "out"), FIXTURES)
def test_no_existing_fixture_gains_a_fact(rows, width, need, out):
    assert not _facts(_message(rows, width, need, out))


def test_tensorflow_wording_gives_the_same_facts():
    message = "InvalidArgumentError: Matrix size-incompatible: In[0]: [640,1], In[1]: [64,10]"
    assert _facts(message) == {FOLDED, UNSUPPORTED}


@pytest.mark.parametrize(("rows", "width", "need", "out", "expected"), PUBLIC[:3])
def test_folded_features_get_the_flatten_step_not_a_resize(rows, width, need, out, expected):
    ctx = _ctx(_message(rows, width, need, out))
    suggestion = OfflineProvider().suggest(ctx)
    assert "flatten" in suggestion.action.lower(), suggestion.action
    assert "in_features" not in suggestion.action and validate(suggestion, ctx).ok


def test_folded_features_rule_out_the_resize_even_in_the_users_own_model():
    ctx = _ctx(_message(1600, 1, 100, 256), USER_FORWARD)
    assert {BUILT, FOLDED, UNSUPPORTED} <= read_premises(ctx).facts
    assert "in_features" not in OfflineProvider().suggest(ctx).action


def test_an_input_smaller_than_one_row_gets_the_orientation_check():
    ctx = _ctx(_message(2, 64, 18496, 256))
    suggestion = OfflineProvider().suggest(ctx)
    assert "in_features" not in suggestion.action
    assert "intended one, laid out as (batch" in suggestion.action, suggestion.action


@pytest.mark.parametrize(
    "frames",
    [
        USER_FORWARD,
        [make_frame("/home/me/net.py", "__init__", 9, context_line="self.fc = nn.Linear(64, 10)")],
    ],
)
def test_a_layer_the_users_code_builds_may_be_resized(frames):
    ctx = _ctx(_message(2, 64, 18496, 256), frames)
    assert {SMALLER, BUILT} <= read_premises(ctx).facts
    assert UNSUPPORTED not in read_premises(ctx).facts
    assert "in_features" in OfflineProvider().suggest(ctx).action


def test_a_library_models_layer_is_not_the_users():
    assert _facts(_message(2, 64, 18496, 256), LIBRARY_FORWARD) == {SMALLER, UNSUPPORTED}
    printed = [
        make_frame("/home/me/run.py", "main", 3, context_line="(fc): Linear(in_features=64)")
    ]
    assert BUILT not in _facts(_message(2, 64, 18496, 256), printed)


def test_a_real_one_feature_input_keeps_the_resize_step():
    """50 rows of one feature into a layer the user's forward runs, built for 3: 50 is no
    multiple of 3, so nothing says the features were folded; resizing stays a candidate."""
    ctx = _ctx(_message(50, 1, 3, 8), USER_FORWARD)
    assert _facts(ctx.message, USER_FORWARD) == {BUILT}
    assert "in_features" in OfflineProvider().suggest(ctx).action


def _llm(action: str, reason: str = "The input width must match the layer.") -> Draft:
    return Draft(action, reason, "matmul-shape-mismatch-linear", 0.8, "openai", "test-llm")


@pytest.mark.parametrize(
    ("action", "harmful"),
    [
        ("Set `in_features` of the first linear layer to 1.", True),
        ("Change `nn.Linear(100, 256)` to `nn.Linear(1, 256)` so it accepts one feature.", True),
        ("Use `nn.LazyLinear(256)` so the layer infers its input size.", True),
        ("Resize the first linear layer to take the input's width.", True),
        ("Reshape the noise to (16, 100) with `noise.view(noise.size(0), -1)`.", False),
        ("Set the input's width to 100, the layer's `in_features`, by flattening it.", False),
        ("Resize inputs to the resolution the model was designed for.", False),
    ],
)
def test_an_llm_answer_changing_the_width_fails_validation(action, harmful):
    ctx = _ctx(_message(1600, 1, 100, 256))
    check = validate(_llm(action), ctx)
    assert check.premises_ok != harmful, check.complaints
    if harmful:
        assert any("spread over its rows" in c for c in check.complaints)


def test_the_same_answer_passes_when_the_shapes_allow_a_resize():
    ctx = _ctx(_message(2, 64, 18496, 256), USER_FORWARD)
    assert validate(_llm("Set `in_features` of the first linear layer to 64."), ctx).premises_ok


def test_the_prompt_premises_name_the_fact():
    lines = read_premises(_ctx(_message(1600, 1, 100, 256))).as_lines()
    assert any(line.startswith(UNSUPPORTED) for line in lines)


def test_an_llm_that_resizes_is_reasked_and_the_reshape_kept(httpserver):
    """Issue 16 item 7 against a local OpenAI-protocol server: the resize is re-asked with
    the complaint, the reshape that follows is kept."""
    answers = [
        {
            "action": "Set `in_features` of the first linear layer to 1.",
            "reason": "The input has one feature per row.",
            "runbook": "matmul-shape-mismatch-linear",
            "confidence": 0.8,
        },
        {
            "action": "Flatten the noise with `torch.flatten(noise, 1)` before the layer.",
            "reason": "Each sample's values are spread over the rows; flattening keeps a row each.",
            "runbook": "matmul-shape-mismatch-linear",
            "confidence": 0.7,
        },
    ]
    provider, requests = scripted_llm(httpserver, *answers)
    outcome = write_suggestion(_ctx(_message(1600, 1, 100, 256)), provider)
    user = "\n".join(m["content"] for m in requests[0]["messages"] if m["role"] == "user")
    assert UNSUPPORTED in user
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert outcome.draft.action == answers[1]["action"] and outcome.validation.ok


# --------------------------------------------------------------------------- properties

_sizes = st.integers(min_value=1, max_value=1 << 20)


@given(rows=_sizes, width=st.integers(min_value=2, max_value=1 << 16), need=_sizes)
def test_folded_never_holds_with_an_inner_width_of_two_or_more(rows, width, need):
    assert FOLDED not in layer_width_facts([_diff(rows, width, need)])


@given(rows=_sizes, need=st.integers(min_value=2, max_value=1 << 16))
def test_folded_holds_exactly_for_whole_multiples(rows, need):
    folded = FOLDED in layer_width_facts([_diff(rows, 1, need)])
    assert folded == (rows % need == 0 and rows >= need)


@given(rows=_sizes, width=_sizes, need=_sizes)
def test_smaller_than_a_row_needs_both_conditions(rows, width, need):
    facts = layer_width_facts([_diff(rows, width, need)])
    if SMALLER in facts:
        assert rows * width < need and need >= MUCH_WIDER * width
    assert not (FOLDED in facts and SMALLER in facts)
    assert (UNSUPPORTED in facts) == bool(facts & {FOLDED, SMALLER})  # no frames: not built


@given(rows=_sizes, width=_sizes, need=_sizes, op=st.sampled_from(["conv", "broadcast", "unknown"]))
def test_other_operations_give_no_fact(rows, width, need, op):
    assert not layer_width_facts([_diff(rows, width, need, op)], USER_FORWARD)


@given(
    verb=st.sampled_from(["Reshape", "Flatten", "Squeeze", "Transpose", "Check", "Print", "Keep"]),
    name=st.sampled_from(["`in_features`", "`input_dim`", "`nn.Linear(100, 10)`", "the layer"]),
)
def test_actions_that_fix_the_input_never_read_as_a_resize(verb, name):
    assert not changes_layer_width(f"{verb} the input so it matches {name}.")


@given(
    verb=st.sampled_from(["Set", "Change", "Update", "Reduce", "Remove"]),
    name=st.sampled_from(["`in_features`", "`input_dim`", "`input_shape`", "the `input_size`"]),
)
def test_actions_that_change_the_width_read_as_a_resize(verb, name):
    action = f"{verb} {name} of the layer to 1."
    assert changes_layer_width(action)
    facts = layer_width_facts([_diff(640, 1, 64)])
    assert resize_violations(action, facts, [_diff(640, 1, 64)])
