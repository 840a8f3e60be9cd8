"""An answer that restates or says a runbook step is judged by what it says itself (issue 16:
a premise rules out wrong answers, never right ones). The reviewer's false positives: a
step's ``says`` phrase inside a clause the answer turns down, and the restated step's own text
deciding a limit, a key prefix or a tensor target the answer gives itself.
"""

from __future__ import annotations

import pytest

from rca.suggestion.negated_clauses import said_parts
from rca.suggestion.premises import premise_complaints, read_premises, shown_harms
from rca.suggestion.restated_steps import OwnKinds, own_kinds
from rca.suggestion.step_options import options_set_by
from rca.suggestion.validation import validate
from tests.support.evidence import draft, incident_context, message_context
from tests.support.linear_time import assert_linear


def _complaints(action: str, runbook: str, message: str, *ranked: tuple[str, float]) -> list[str]:
    ctx = message_context(message, *ranked)
    return premise_complaints(draft(action, runbook), ctx, read_premises(ctx))


_CUDNN = (
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 9, 2) but"
    " found runtime version (8, 5, 0)"
)
_CUDNN_RANKED = (("cuda-driver-too-old", 0.5), ("cuda-shared-library-version-mismatch", 0.9))


@pytest.mark.parametrize(
    "action",
    [
        "Install cuDNN 8.9.2 or newer so it matches the build; no need to update the driver.",
        "Install cuDNN 8.9.2 or newer so it matches the build (updating the NVIDIA driver does"
        " not help).",
        "Install cuDNN 8.9.2 or newer instead of updating the NVIDIA driver.",
        "Install cuDNN 8.9.2 or newer; do not upgrade the driver.",
    ],
)
def test_a_step_phrase_the_answer_turns_down_is_not_said(action: str) -> None:
    """runtime-older-than-build rules out the driver-update step, not an answer that says
    the driver needs no update."""
    assert _complaints(action, "cuda-driver-too-old", _CUDNN, *_CUDNN_RANKED) == []


@pytest.mark.parametrize(
    "action",
    [
        "Update the NVIDIA driver to 550 or newer.",
        "Install cuDNN 8.9.2, then update the NVIDIA driver.",
        "Install cuDNN 8.9.2 and update the NVIDIA driver (the old one does not help).",
    ],
)
def test_a_step_phrase_the_answer_says_is_still_held_to_the_step(action: str) -> None:
    complaints = _complaints(action, "cuda-driver-too-old", _CUDNN, *_CUDNN_RANKED)
    assert any("runs at an older version than" in c for c in complaints), complaints


@pytest.mark.parametrize(
    ("action", "said"),
    [
        ("Install cuDNN; no need to update the driver.", ["Install cuDNN"]),
        ("Install cuDNN (updating the driver does not help).", ["Install cuDNN"]),
        ("Install torch instead of downgrading the driver", ["Install torch"]),
        ("Keep 535 rather than installing 470, then reboot.", ["Keep 535", "then reboot"]),
        ("You don't need to update the driver.", []),
        ("Never install 470. Use torch 2.1.", ["Use torch 2.1"]),
        ("Update the driver to 550.54.14", ["Update the driver to 550.54.14"]),
        ("Don't upgrade but downgrade the driver", ["but downgrade the driver"]),
        ("Avoid upgrading and roll back the driver", ["and roll back the driver"]),
        ("Rather than upgrade downgrade the driver", ["downgrade the driver"]),
        ("Avoid upgrading and rolling back the driver", []),
        ("Downgrade the driver if upgrading does not help", ["Downgrade the driver"]),
        ("Downgrade the driver - a newer one is not needed", ["Downgrade the driver"]),
    ],
)
def test_said_parts_drop_what_a_clause_turns_down(action: str, said: list[str]) -> None:
    assert said_parts(action) == said


def test_said_parts_take_linear_time() -> None:
    def read(n: int) -> None:
        said_parts("do not (" * (n // 8))
        said_parts("a" * n)
        said_parts("not help " * (n // 9))

    assert_linear(read, 100, 4000)


_OPSET = "ValueError: make_sure failure: Opset 19 is not supported yet. Please use a lower opset"
_TYPES = (
    "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.cuda.HalfTensor)"
    " should be the same"
)
_MODEL_SIDE = (
    "RuntimeError: Error(s) in loading state_dict for DistributedDataParallel:\n"
    '\tMissing key(s) in state_dict: "module.projection.0.weight",'
    ' "module.recur_block.0.0.conv1.weight", "module.head.0.weight", "module.head.2.weight".\n'
    '\tUnexpected key(s) in state_dict: "projection.0.weight", "recur_block.0.0.conv1.weight",'
    ' "head.0.weight", "head.2.weight".'
)
_ONNX = "onnx-export-unsupported-operator"
_DEVICE = "device-mismatch-input-weight-type"
_PREFIX = "checkpoint-keys-module-prefix"


@pytest.mark.parametrize(
    ("action", "runbook", "message"),
    [
        (
            "Export with a lower opset: torch.onnx.export(..., opset_version=17) or optimum-cli"
            " export onnx --opset 17.",
            _ONNX,
            _OPSET,
        ),
        (
            "Cast the input batch to the model's dtype, not its device, when the weight side is"
            " `cuda` half: `x = x.to(model.dtype)`.",
            _DEVICE,
            _TYPES,
        ),
        (
            "Add the `module.` prefix to the checkpoint keys before loading:"
            ' `sd = {"module." + k: v for k, v in sd.items()}` instead of stripping it.',
            _PREFIX,
            _MODEL_SIDE,
        ),
    ],
)
def test_an_answer_restating_a_step_is_judged_by_its_own_move(
    action: str, runbook: str, message: str
) -> None:
    """The restated step's own text (a newer opset, the input moved to the model's device,
    the prefix stripped) stands in only for a kind the answer says nothing of."""
    assert _complaints(action, runbook, message, (runbook, 0.9)) == []


@pytest.mark.parametrize(
    ("action", "runbook", "message", "why"),
    [
        (
            "Move the input batch to the model's device when the weight side is `cuda`",
            _DEVICE,
            _TYPES,
            "the input is already on cuda",
        ),
        (
            'Strip the prefix before loading: `sd = {k.removeprefix("module."): v for k, v in'
            " sd.items()}`.",
            _PREFIX,
            _MODEL_SIDE,
            "already lack `module.`",
        ),
        (
            "Export with a newer opset (`torch.onnx.export(..., opset_version=20)`;"
            " `optimum-cli export onnx --opset 20`).",
            _ONNX,
            _OPSET,
            "moving it up goes further",
        ),
    ],
)
def test_a_restatement_making_the_steps_move_is_still_ruled_out(
    action: str, runbook: str, message: str, why: str
) -> None:
    complaints = _complaints(action, runbook, message, (runbook, 0.9))
    assert any(why in c for c in complaints), complaints


def test_an_answer_naming_its_own_driver_is_judged_by_it() -> None:
    """The filled step names the build's minimum driver (450.80.02, older than the 535
    installed); an answer naming 550 is judged by 550."""
    smi = "| NVIDIA-SMI 535.104.05     Driver Version: 535.104.05      CUDA Version: 12.2     |"
    message = (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
    )
    ctx = incident_context(message, ("cuda-driver-too-old", 0.9), logs=[smi, "torch==2.1.0+cu118"])
    action = (
        "Update the NVIDIA driver on the host to 550 or newer, a version that supports the"
        " runtime's CUDA version."
    )
    assert premise_complaints(draft(action, "cuda-driver-too-old"), ctx, read_premises(ctx)) == []
    older = "Update the NVIDIA driver on the host to 470, a version that supports the runtime."
    complaints = premise_complaints(draft(older, "cuda-driver-too-old"), ctx, read_premises(ctx))
    assert any("driver-moved-older" in c for c in complaints), complaints


def test_a_steps_older_driver_stands_in_only_for_an_answer_naming_none() -> None:
    smi = "| NVIDIA-SMI 535.104.05     Driver Version: 535.104.05      CUDA Version: 12.2     |"
    message = (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
    )
    premises = read_premises(message_context(message, ("cuda-driver-too-old", 0.9), logs=(smi,)))
    step = "Install NVIDIA driver 470."
    assert shown_harms(step, premises, answer="Install NVIDIA driver 550.") == []
    assert shown_harms(step, premises, answer="Install cuDNN 8.9.") != []


_DDP = (
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a"
    " new one. This error indicates that your module has parameters that were not used in"
    " producing loss. Since `find_unused_parameters=True` is enabled, this likely  means that"
    " not all `forward` outputs participate in computing loss."
)


def test_quoting_an_option_back_as_already_passed_does_not_set_it() -> None:
    action = (
        "Set `TORCH_DISTRIBUTED_DEBUG=DETAIL` to name the unused parameters;"
        " `find_unused_parameters=True` is already passed to `DistributedDataParallel`."
    )
    assert _complaints(action, "ddp-unused-parameters", _DDP, ("ddp-unused-parameters", 0.9)) == []
    assert [o.how for o in options_set_by(action)] == ["set", "other"]


def test_a_repeated_option_is_one_complaint_not_two() -> None:
    action = "Pass find_unused_parameters=True to DistributedDataParallel."
    complaints = _complaints(action, "ddp-unused-parameters", _DDP, ("ddp-unused-parameters", 0.9))
    assert complaints == [
        "the incident shows find_unused_parameters=True is already set: do not suggest setting"
        " it again; find why the failure happens with it set"
    ]


@pytest.mark.parametrize(
    "action",
    [
        "Export with an older opset (`opset_version=17` or lower; `optimum-cli export onnx"
        " --opset 17`), not a newer opset.",
        "Export with opset 17 instead of a newer opset (`torch.onnx.export(...,"
        " opset_version=17)`; `optimum-cli export onnx --opset 17`).",
    ],
)
def test_a_limit_move_the_answer_turns_down_is_not_its_move(action: str) -> None:
    assert _complaints(action, _ONNX, _OPSET, (_ONNX, 0.9)) == []


@pytest.mark.parametrize(
    "action",
    [
        "Load the checkpoint into the bare model before wrapping it in DDP"
        " (`model.module.load_state_dict(sd)`); do not strip the `module.` prefix.",
        'Do not strip the prefix before loading with `sd = {k.removeprefix("module."): v for'
        " k, v in sd.items()}`; load into the bare model before wrapping it in DDP instead.",
    ],
)
def test_a_prefix_move_the_answer_turns_down_is_not_its_move(action: str) -> None:
    assert _complaints(action, _PREFIX, _MODEL_SIDE, (_PREFIX, 0.9)) == []


def test_no_answer_says_nothing_and_fails_validation() -> None:
    # review (issue 16): a draft whose action is None (a provider's JSON without one) crashed
    # the premise checks instead of failing on its missing action
    assert own_kinds(None) == OwnKinds(options=False, modules=False)
    assert own_kinds("Pass find_unused_parameters=True to DDP.").options
    ctx = message_context(_DDP, ("ddp-unused-parameters", 0.9))
    result = validate(draft(None, "ddp-unused-parameters"), ctx)  # type: ignore[arg-type]
    assert not result.ok and "action is missing" in result.complaints[0]
