"""A value the installed tool rejects as unsupported is never raised further (issue 16).

A holdout judging found suggestions that moved a setting towards newer values when the message
says the tool already rejects the requested one as too new ("opset 18 is not supported yet.
Please use a lower opset", "Your model ir_version 10 is higher than the checker's (9)"). The
fix lowers the value or upgrades the tool. Each message below is worded as the tool prints it
(tf2onnx, the onnx checker, PyTorch's serializer and ONNX exporter, Triton's compiler check,
PyTorch's capability check, nvcc's host-compiler check, the TFLite interpreter); the reader
takes the setting and its bound from the words, and validation rejects a move past it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.limit_wordings import line_bounds
from rca.suggestion.named_limits import read_named_limits
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

TF2ONNX = "ValueError: make_sure failure: Opset 19 is not supported yet. Please use a lower opset"
CHECKER = (
    "onnx.onnx_cpp2py_export.checker.ValidationError: Your model ir_version 10 is higher than"
    " the checker's (9)."
)
CHECKER_BARE = (
    "onnx.onnx_cpp2py_export.checker.ValidationError: Your model ir_version is higher than the"
    " checker's."
)
CURRENT_MAX = "RuntimeError: unsupported opset version 18 (current max 17)"
TORCH_FILE = (
    "RuntimeError: version_ <= kMaxSupportedFileFormatVersion INTERNAL ASSERT FAILED at"
    ' "../caffe2/serialize/inline_container.cc":145, please report a bug to PyTorch. Attempted to'
    " read a PyTorch file with version 10, but the maximum supported version for reading is 6."
    " Your PyTorch installation may be too old."
)
TORCH_OP = (
    "torch.onnx.errors.UnsupportedOperatorError: Exporting the operator 'aten::tril' to ONNX"
    " opset version 13 is not supported. Support for this operator was added in version 14, try"
    " exporting with this version."
)
TORCH_OP_17 = TORCH_OP.replace("added in version 14", "added in version 17")
TRITON = (
    "RuntimeError: Found NVIDIA GeForce GTX 1080 Ti which is too old to be supported by the"
    " triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA"
    " Capability >= 7.0, but your device is of CUDA capability 6.1"
)
K80 = (
    "UserWarning: Found GPU0 Tesla K80 which is of cuda capability 3.7. PyTorch no longer"
    " supports this GPU because it is too old. The minimum cuda capability supported by this"
    " library is 5.0."
)
GCC = (
    "#error -- unsupported GNU version! gcc versions later than 11 are not supported! The nvcc"
    " flag '-allow-unsupported-compiler' can be used to override this version check"
)
TFLITE = (
    "RuntimeError: Didn't find op for builtin opcode 'FULLY_CONNECTED' version '9'. An older"
    " version of this builtin might be supported. Are you using an old TFLite binary with a"
    " newer model?"
)
RANGE = "ValueError: opset_version 21 is not supported, supported range is [7, 20]"
MUST = "AssertionError: opset_version must be <= 17, got 18"


def _bounds(message: str) -> list[tuple[str, float | None, float | None, float | None, bool]]:
    return [
        (limit.name, limit.rejected, limit.maximum, limit.minimum, limit.lower)
        for limit in read_named_limits([message])
    ]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (TF2ONNX, [("Opset", 19, None, None, True)]),
        (CHECKER, [("ir_version", 10, 9, None, False)]),
        (CHECKER_BARE, [("ir_version", None, None, None, True)]),
        (CURRENT_MAX, [("opset version", 18, 17, None, False)]),
        (TORCH_FILE, [("file", 10, 6, None, False)]),
        (TORCH_OP, [("opset version", 13, None, 14, False)]),
        (TRITON, [("capability", 6.1, None, 7.0, False)]),
        (K80, [("capability", 3.7, None, 5.0, False)]),
        (GCC, [("gcc", None, 11, None, False)]),
        (TFLITE, [("opcode", 9, None, None, True)]),
        (RANGE, [("opset_version", 21, 20, 7, False)]),
        (MUST, [("opset_version", None, 17, None, False)]),
    ],
)
def test_each_wording_of_a_bound_is_read(message, expected):
    assert _bounds(message) == expected


def test_lines_without_a_bound_read_none():
    for message in (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. See"
        " max_split_size_mb to avoid fragmentation",
        "RuntimeError: The NVIDIA driver on your system is too old (found version 10010).",
        "Epoch 3: loss 0.12, max 5 retries",
        # Two settings compared (vLLM): the fix raises max_lora_rank, no tool limit is named.
        "ValueError: LoRA rank 64 is greater than max_lora_rank 16.",
    ):
        assert read_named_limits([message]) == ()


def _harmful(message: str, action: str) -> bool:
    ctx = message_context(message, ("onnxruntime-opset-unsupported", 0.9))
    check = validate(draft(action, "onnxruntime-opset-unsupported"), ctx)
    return not check.premises_ok


@pytest.mark.parametrize(
    ("message", "action", "harmful"),
    [
        (TF2ONNX, "Export with a newer opset (`--opset 20`).", True),
        (TF2ONNX, "Export with the latest opset the converter knows.", True),
        (TF2ONNX, "Convert again with `--opset 18`.", False),
        (CHECKER, "Stamp the model with `ir_version=11` and check it again.", True),
        (CHECKER, "Upgrade onnx so that the checker reads IR version 10.", False),
        (CHECKER_BARE, "Raise the model's ir_version before checking.", True),
        (CHECKER_BARE, "Export again with an older exporter so the ir_version is lower.", False),
        (CURRENT_MAX, "Set the opset higher and export again.", True),
        (CURRENT_MAX, "Re-export with `opset_version=17`.", False),
        (RANGE, "Export with `opset_version=22`.", True),
        (RANGE, "Export with `opset_version=17`.", False),
        (MUST, "Pass `opset_version=18` to the exporter.", True),
        (TORCH_OP, "Export with `opset_version=11`.", True),
        (TORCH_OP, "Export with `opset_version=14`.", False),
        # "N or higher" is an open range that holds the minimum: an operator added in opset 17
        # keeps the runbook's "opset_version=14 or higher" (its example number, not a move
        # below the minimum), while "opset_version=14" alone stays below it.
        (TORCH_OP_17, "Export with a newer opset (`opset_version=14` or higher).", False),
        (TORCH_OP_17, "Export with `opset_version=14`.", True),
        # The runbook's step with its example numbers: the move is up, as the message asks.
        (
            TORCH_OP_17,
            "Export with a newer opset (`opset_version=14` or higher; `--opset 16`).",
            False,
        ),
        (TORCH_OP_17, "Export with a newer opset (`opset_version=13`).", True),
        (CURRENT_MAX, "Re-export with `opset_version=16` or lower.", False),
        (CURRENT_MAX, "Re-export with `opset_version=18` or lower.", False),
        (CURRENT_MAX, "Re-export with `opset_version=19` or higher.", True),
        (TFLITE, "Raise the opcode version of the model.", True),
    ],
)
def test_a_move_past_the_worded_bound_fails_validation(message, action, harmful):
    assert _harmful(message, action) == harmful


def test_the_runbook_step_that_raises_the_opset_is_never_the_action_past_a_maximum():
    """The export runbook's first step raises the opset; where the message says the converter
    already rejects the requested one as too new, another step is the action."""
    from rca.suggestion.providers import OfflineProvider

    ctx = message_context(TF2ONNX, ("onnx-export-unsupported-operator", 0.9))
    suggestion = OfflineProvider().suggest(ctx)
    assert "newer opset" not in suggestion.action
    assert validate(suggestion, ctx).premises_ok


_TEXT = st.text(
    alphabet=st.sampled_from(list("opset version IR max supported 0123456789.,:()[]<>=' \n")),
    max_size=400,
)


@settings(max_examples=150, deadline=None)
@given(_TEXT)
def test_the_reader_takes_any_text(text):
    limits = read_named_limits([text])
    assert len(limits) <= 6
    for name, field, _ in line_bounds(text[:2000]):
        assert field in ("rejected", "maximum", "minimum", "lower", "higher")
        assert name is None or name.strip()


def test_the_reader_is_linear_on_adversarial_text():
    def read(n: int) -> None:
        crafted = "opset " * (2 * n) + "version 1" + " is higher than" * (n // 2)
        read_named_limits([crafted, "unsupported " * (4 * n)])

    assert_linear(read, 500, 10_000)
