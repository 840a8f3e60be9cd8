"""A step whose words say when it applies carries that in its ``Applies:`` line, so the
incident can choose it (runbook data, not code): the setting (training or serving) of a
checkpoint-head step, the companion package a TensorFlow version-pairing step is for."""

from __future__ import annotations

import pytest

from rca.suggestion.providers.step_ranking import rank_steps
from tests.support.evidence import incident_context

_HEAD = (
    "RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: "
    "copying a param with shape torch.Size([100, 512]) from checkpoint, the shape in current"
    " model is torch.Size([10, 512])."
)


def _frame(filename: str, function: str) -> dict[str, object]:
    return {
        "filename": filename,
        "function": function,
        "context_line": "model.load_state_dict(torch.load(path))",
        "in_app": True,
    }


@pytest.mark.parametrize(
    ("frame", "wanted"),
    [
        # Serving wants the checkpoint's own predictions: build the head it was trained with.
        (_frame("serve.py", "predict"), "the value the checkpoint was trained with"),
        # Training on a new label set keeps the body and starts the head fresh.
        (_frame("finetune.py", "train"), "ignore_mismatched_sizes=True"),
    ],
)
def test_a_head_size_mismatch_gets_the_step_of_its_setting(
    frame: dict[str, object], wanted: str
) -> None:
    ctx = incident_context(_HEAD, ("checkpoint-size-mismatch-head", 0.9), frames=[frame])
    assert wanted in rank_steps(ctx)[0].action


@pytest.mark.parametrize(
    ("message", "wanted"),
    [
        (
            "UserWarning: Tensorflow Addons supports using Python ops for all Tensorflow"
            " versions above or equal to 2.9.0 and strictly below 2.12.0. The versions of"
            " TensorFlow you are currently using is 2.13.0 and is not supported.",
            "tensorflow-addons",
        ),
        (
            "tensorflow.python.framework.errors_impl.NotFoundError: /opt/venv/lib/python3.10/"
            "site-packages/tensorflow_text/python/ops/_regex_split_ops.so: undefined symbol:"
            " _ZN10tensorflow8OpKernel11TraceStringB5cxx11ERKNS_15OpKernelContextEb",
            "tensorflow-text",
        ),
    ],
)
def test_a_companion_package_pairing_gets_the_step_for_that_package(
    message: str, wanted: str
) -> None:
    ctx = incident_context(message, ("tf-companion-package-version-pairing", 0.9))
    assert wanted in rank_steps(ctx)[0].action
