"""Shape diffs read from real framework messages, client diffs, and how far apart they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.shapes import (
    extract_shape_diff,
    incompatibility,
    normalise_shape_diff,
    rank_mismatches,
)

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


def dev_cases() -> dict[str, dict]:
    cases = (json.loads(line) for line in DEV_CASES.read_text(encoding="utf-8").splitlines())
    return {case["id"]: case for case in cases}


@pytest.mark.parametrize("case_id", ["c014", "c020", "c023"])
def test_message_yields_the_shapes_the_eval_set_expects(case_id):
    case = dev_cases()[case_id]
    [diff] = extract_shape_diff(case["message"])
    assert {k: diff[k] for k in ("expected", "actual", "tensor")} == case["shapes"]


@pytest.mark.parametrize("case_id", ["c047", "c049"])
def test_broadcast_message_yields_the_expected_and_actual_lengths(case_id):
    case = dev_cases()[case_id]
    [diff] = extract_shape_diff(case["message"])
    assert diff["op"] == "broadcast"
    assert (diff["expected"], diff["actual"]) == (
        case["shapes"]["expected"],
        case["shapes"]["actual"],
    )


def test_keras_constructed_shape_log_yields_input_shapes():
    case = dev_cases()["c084"]
    [diff] = extract_shape_diff(case["logs"][0])
    assert {k: diff[k] for k in ("expected", "actual", "tensor")} == case["shapes"]


def test_keras_ndim_message_is_a_rank_change():
    [diff] = extract_shape_diff(dev_cases()["c084"]["message"])
    assert diff["actual"] == [32, 834, 3] and len(diff["expected"]) == 4
    assert incompatibility(diff) == 1.0


def test_messages_that_name_no_mismatch_give_no_diff():
    for case in dev_cases().values():
        if case["shapes"] is None:
            assert extract_shape_diff(case["message"]) == [], case["id"]


def test_every_size_mismatch_of_a_state_dict_error_is_returned():
    message = (
        "Error(s) in loading state_dict for Net:\n"
        "\tsize mismatch for fc.weight: copying a param with shape torch.Size([10, 512]) from "
        "checkpoint, the shape in current model is torch.Size([2, 512]).\n"
        "\tsize mismatch for fc.bias: copying a param with shape torch.Size([10]) from "
        "checkpoint, the shape in current model is torch.Size([2])."
    )
    assert extract_shape_diff(message) == [
        {"tensor": "fc.weight", "op": "load_state_dict", "expected": [2, 512], "actual": [10, 512]},
        {"tensor": "fc.bias", "op": "load_state_dict", "expected": [2], "actual": [10]},
    ]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            'Input 0 of layer "dense" is incompatible with the layer: expected shape=(None, 784),'
            " found shape=(32, 28, 28)",
            {"tensor": "dense", "op": "input", "expected": [None, 784], "actual": [32, 28, 28]},
        ),
        (
            "Incompatible shapes: [32,10] vs. [32,5] [Op:BroadcastTo]",
            {"tensor": None, "op": "broadcast", "expected": [32, 5], "actual": [32, 10]},
        ),
        (
            "Token indices sequence length is longer than the specified maximum sequence length "
            "for this model (2545 > 512). Running this sequence through the model will result in "
            "indexing errors",
            {"tensor": "input_ids", "op": "sequence_length", "expected": [512], "actual": [2545]},
        ),
        (
            "The model's max seq len (32768) is larger than the maximum number of tokens that "
            "can be stored in KV cache (15264). Try increasing `gpu_memory_utilization`",
            {"tensor": "max_model_len", "op": "kv_cache", "expected": [15264], "actual": [32768]},
        ),
        (
            "Expected input batch_size (32) to match target batch_size (64).",
            {"tensor": "input", "op": "batch", "expected": [64], "actual": [32]},
        ),
        (
            "Given groups=1, weight of size [64, 3, 3, 3], expected input[3, 224, 224] to have 3 "
            "channels, but got 1 channels instead",
            None,
        ),
        (
            "Given groups=1, weight of size [16, 3, 3, 3], expected input[1, 4, 64, 64] to have "
            "3 channels, but got 4 channels instead",
            {"tensor": "input", "op": "conv", "expected": [1, 3, 64, 64], "actual": [1, 4, 64, 64]},
        ),
    ],
)
def test_other_framework_forms_are_recognised(message, expected):
    diffs = extract_shape_diff(message)
    if expected is None:
        assert diffs == []  # "[3, 224, 224]" has no 1-channel dim: nothing to claim
    else:
        assert diffs == [expected]


def test_onnxruntime_dimension_error_names_the_input_and_the_index():
    message = (
        "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions for input: "
        "pixel_values for the following indices\n index: 1 Got: 1 Expected: 3\n"
    )
    assert extract_shape_diff(message) == [
        {"tensor": "pixel_values", "op": "input", "expected": [None, 3], "actual": [None, 1]}
    ]


def test_same_oom_message_with_allocation_shape_gives_no_diff():
    assert extract_shape_diff("CUDA out of memory. Tried to allocate 2.00 GiB") == []


@pytest.mark.parametrize(
    ("weight", "expected"),
    [("[64, 1, 4, 4]", [None, 1, None, None]), ("64 3 7 7", [None, 3, None, None])],
)
def test_torch_rank_message_gives_the_input_and_the_weights_channels(weight, expected):
    message = (
        f"RuntimeError: Expected 4-dimensional input for 4-dimensional weight {weight}, but got"
        " 3-dimensional input of size [128, 256, 256] instead"
    )
    assert list(rank_mismatches(message)) == [
        {"tensor": "input", "op": "conv", "expected": expected, "actual": [128, 256, 256]}
    ]
    assert extract_shape_diff(message) == []  # not a stored form (see rank_mismatches)
    assert list(rank_mismatches("Expected 4-dimensional input, got 3")) == []


def test_client_diffs_are_coerced_and_unknown_dims_kept():
    diffs = normalise_shape_diff(
        [
            {"tensor": "x", "op": "matmul", "expected": [None, "768"], "actual": [256.0, 4096]},
            {"expected": "(None, 28, 28)", "actual": "torch.Size([32, 784])"},
            {"expected": ["a"], "actual": [1]},
            {"expected": [True], "actual": [1]},
            "garbage",
            {"op": "x"},
        ]
    )
    assert diffs == [
        {"tensor": "x", "op": "matmul", "expected": [None, 768], "actual": [256, 4096]},
        {"tensor": None, "op": "unknown", "expected": [None, 28, 28], "actual": [32, 784]},
    ]


def test_a_single_client_diff_object_is_accepted():
    assert normalise_shape_diff({"expected": [1, 2], "actual": [1, 3]})[0]["actual"] == [1, 3]


def test_rank_change_is_fully_incompatible():
    assert incompatibility({"tensor": None, "op": "x", "expected": [1, 2], "actual": [2]}) == 1.0


def test_equal_shapes_and_unknown_only_dims_are_compatible():
    assert incompatibility({"tensor": None, "op": "x", "expected": [3, 4], "actual": [3, 4]}) == 0
    assert incompatibility({"tensor": None, "op": "x", "expected": [None], "actual": [7]}) == 0


def test_larger_mismatches_score_higher_and_every_mismatch_counts_at_least_half():
    near = {"tensor": None, "op": "x", "expected": [32000, 64], "actual": [32008, 64]}
    far = {"tensor": None, "op": "x", "expected": [2, 64], "actual": [32008, 64]}
    assert 0.25 <= incompatibility(near) < incompatibility(far) <= 1.0
    matmul = extract_shape_diff(dev_cases()["c014"]["message"])[0]
    assert incompatibility(matmul) > 0.9


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=1000))
def test_any_text_extracts_without_raising(text):
    for diff in extract_shape_diff(text):
        assert 0.0 <= incompatibility(diff) <= 1.0


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="0123456789x(), []NoneSize.torch:", max_size=60).map(
        lambda dims: (
            f"mat1 and mat2 shapes cannot be multiplied ({dims}) size mismatch for "
            f"w: copying a param with shape torch.Size([{dims}]) from checkpoint, the shape in "
            f"current model is torch.Size([{dims}]) expected shape=({dims}), found shape=({dims})"
        )
    )
)
def test_near_miss_shape_messages_extract_without_raising(message):
    for diff in extract_shape_diff(message):
        assert all(d is None or isinstance(d, int) for d in diff["expected"] + diff["actual"])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.sampled_from(["tensor", "op", "expected", "actual", "x"]), children)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_client_value_normalises_without_raising(value):
    for diff in normalise_shape_diff(value):
        assert 0.0 <= incompatibility(diff) <= 1.0


# One message of each form the extractors read, and pieces of them to splice.
_FORM_MESSAGES = [
    "mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
    "Matrix size-incompatible: In[0]: [32,100], In[1]: [200,10]",
    "size mismatch for fc.weight: copying a param with shape torch.Size([10, 512]) from "
    "checkpoint, the shape in current model is torch.Size([12, 512])",
    "expected input[4, 1, 28, 28] to have 3 channels, but got 1 channels",
    "size of tensor a (3) must match the size of tensor b (4)",
    "Incompatible shapes: [2,3] vs. [2,4]",
    'layer "dense" is incompatible with the layer: expected shape=(None, 784), found '
    "shape=(None, 28, 28)",
    "constructed with shape (None, 10) for input KerasTensor(name='x'), but it was called "
    "on an input with incompatible shape (None, 12)",
    'Input 0 of layer "conv" is incompatible with the layer: expected min_ndim=4, found '
    "ndim=3. Full shape received: (None, 28, 28)",
    "Token indices sequence length is longer than the specified maximum sequence length "
    "for this model (2545 > 512)",
    "maximum context length is 4096 tokens. However, you requested 5000 tokens",
    "Input length of input_ids is 600, but `max_length` is set to 512",
    "max seq len (8192) is larger than the maximum number of tokens that can be stored in "
    "KV cache (4096)",
    "Expected input batch_size (32) to match target batch_size (16)",
    "Got invalid dimensions for input: x for the following indices index: 1 Got: 3 Expected: 1",
]
_FORM_PIECES = st.sampled_from(_FORM_MESSAGES).flatmap(
    lambda text: st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(
        lambda cut: text[min(cut) : max(cut)]
    )
) | st.sampled_from([*_FORM_MESSAGES, "12", "3", "x", ", ", ")", "]", "\ud800", "é"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_FORM_PIECES | st.text(max_size=6), max_size=12).map("".join))
def test_skipping_forms_whose_literal_is_absent_extracts_the_same_diffs(message):
    from unittest import mock

    from ingest.parsing import shapes

    expected = extract_shape_diff(message)
    with mock.patch.object(shapes, "_matches", lambda form, text: form[1].finditer(text)):
        assert extract_shape_diff(message) == expected
