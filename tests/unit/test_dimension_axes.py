"""Axes and indices in code are not tensor sizes: the dimension check must not read
``x.size(0)`` as a dimension of 0, while a fabricated size still fails."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.parsing.shapes import ShapeDiff
from rca.suggestion.checks.dimensions import named_dims, unknown_dim_share, without_axes
from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.validation import validate

MATMUL = ShapeDiff(tensor=None, op="matmul", expected=[None, 512], actual=[4, 256])


@dataclass
class _Answer:
    action: str
    reason: str
    runbook: str


def _ctx() -> AnalysisContext:
    return AnalysisContext(
        error_type="RuntimeError",
        message="mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        frames=[],
        shape_diff=[MATMUL],
        evidence=[Evidence("matmul-shape-mismatch-linear", "Linear", "matmul_shape_mismatch", "")],
    )


@pytest.mark.parametrize(
    "text",
    [
        "Flatten with `torch.flatten(x, 1)` or `x.view(x.size(0), -1)` instead of `view(-1, N)`.",
        "Flatten with `x.reshape((x.shape[0], -1))` instead of a hard-coded size.",
        "Flatten with `tf.reshape(x, [tf.shape(x)[0], -1])` instead of a hard-coded reshape.",
        "Permute HWC to CHW (`x.permute(0, 3, 1, 2)`, `torch.from_numpy(a).permute(2, 0, 1)`).",
        "Use `target.argmax(dim=1)` for one-hot labels.",
        "Move the class axis to dim 1 (`logits.permute(0, 2, 1)`).",
        "Average over the spatial axes (`x.mean(axis=(1, 2))`) before the Dense layer.",
        "Transpose with `np.transpose(x, (0, 3, 1, 2))` or `tf.transpose(x, perm=[0, 3, 1, 2])`.",
        "Add the channel axis with `x.unsqueeze(1)` or `np.expand_dims(x, axis=-1)`.",
        "Take `outputs[0][1]` and call `x.squeeze(0)` when a batch was wrapped twice.",
        "Use `nn.Flatten(start_dim=1, end_dim=-1)` and `torch.movedim(x, 1, 3)`.",
    ],
)
def test_axes_and_indices_are_not_dimensions(text: str) -> None:
    assert named_dims(text) == set()
    assert unknown_dim_share(text, [MATMUL]) == 0.0


def test_the_flatten_step_validates_on_a_matmul_incident() -> None:
    answer = _Answer(
        "Flatten with `torch.flatten(x, 1)` or `x.view(x.size(0), -1)` instead of a hard-coded"
        " `view(-1, N)`.",
        "A hard-coded size folds the batch into features when the shape changes.",
        "matmul-shape-mismatch-linear",
    )
    result = validate(answer, _ctx())
    assert result.unknown_dim_share == 0.0
    assert result.ok, result.complaints


@pytest.mark.parametrize(
    ("text", "dims"),
    [
        ("Reshape to [4, 1024] or 4x1024.", {4, 1024}),
        ("Set `nn.Linear(2048, 10)`.", {2048, 10}),
        ("Create `torch.randn(1, 3, 224, 224)` as the dummy input.", {1, 3, 224}),
        ("Use `x.view(4, 2048)` after `x.size(0)`.", {4, 2048}),
        ("Set in_features=768 along dim 1.", {768}),
        ("Pad the vocab to dim 50304.", {50304}),
        ("The input[4, 1, 28, 28] needs 3 channels.", {4, 1, 28, 3}),
        ("An empty batch of shape (0, 512).", {0, 512}),
    ],
)
def test_sizes_still_count_next_to_axes(text: str, dims: set[int]) -> None:
    assert named_dims(text) == dims


def test_a_fabricated_size_still_fails_beside_an_axis() -> None:
    answer = _Answer(
        "Flatten with `x.view(x.size(0), -1)` and set `nn.Linear(2048, 10)`.",
        "The flattened input has 2048 features.",
        "matmul-shape-mismatch-linear",
    )
    result = validate(answer, _ctx())
    assert result.unknown_dim_share > 0.3
    assert not result.ok
    assert any("2048" in complaint for complaint in result.complaints)


_AXIS = st.integers(min_value=-3, max_value=5)
_AXIS_CODE = st.one_of(
    _AXIS.map(lambda k: f"`x.size({k})`"),
    _AXIS.map(lambda k: f"`x.shape[{k}]`"),
    _AXIS.map(lambda k: f"`tf.shape(x)[{k}]`"),
    _AXIS.map(lambda k: f"`torch.softmax(logits, dim={k})`"),
    _AXIS.map(lambda k: f"`np.squeeze(a, axis={k})`"),
    st.permutations(range(4)).map(lambda p: f"`x.permute({', '.join(map(str, p))})`"),
    st.permutations(range(3)).map(lambda p: f"`np.transpose(a, {tuple(p)})`"),
)
_SIZE = st.integers(min_value=2, max_value=100_000)


@given(_AXIS_CODE, _SIZE, _SIZE)
def test_property_an_axis_adds_no_dimension_and_hides_none(code: str, a: int, b: int) -> None:
    """Any axis expression beside a real shape: the shape's sizes, nothing more."""
    plain = f"Reshape the input to [{a}, {b}] before the layer."
    with_axis = f"Reshape the input to [{a}, {b}] with {code} before the layer."
    assert named_dims(with_axis) == named_dims(plain) == {a, b}


@given(_AXIS_CODE, _SIZE)
def test_property_a_cued_size_survives_an_axis(code: str, n: int) -> None:
    assert named_dims(f"Set in_features={n} and flatten with {code}.") == {n}


@given(st.text(max_size=600))
def test_property_blanking_keeps_length_and_only_removes_numbers(text: str) -> None:
    blanked = without_axes(text)
    assert len(blanked) == len(text)
    assert all(c == d or d == " " for c, d in zip(text, blanked, strict=True))
