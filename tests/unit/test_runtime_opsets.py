"""A node ONNX Runtime has no implementation for, at an opset the installed release implements,
lacks a kernel for its input types: the cast is the fix, upgrading the runtime is not
(``node-opset-implemented``, from the runtime's version matrix as data)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.context import AnalysisContext
from rca.suggestion.platform_facts import platform_facts
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.runtime_opsets import node_opset_implemented
from rca.suggestion.validation import validate
from tests.support.evidence import draft, evidence, message_context

_NOT_IMPLEMENTED = (
    "onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented: [ONNXRuntimeError] : 9 :"
    " NOT_IMPLEMENTED : Could not find an implementation for the node {node}"
)
_RUNBOOK = ("onnxruntime-not-implemented-node", 0.9)


@pytest.mark.parametrize(
    ("node", "shown", "implemented"),
    [
        ("OneHot(11)", "My onnxruntime version is 1.5.2, and onnx version is 1.7.0.", True),
        ("OneHot(11)", "onnxruntime==1.8.0", True),
        ("Cast_3:Cast(13)", "ONNX Runtime version: 1.7.0", True),
        ("ai.onnx.ml:TreeEnsembleRegressor(1)", "onnxruntime-gpu 1.10.0", True),
        # newer than the release implements: the upgrade is the fix
        ("Resize(19)", "My onnxruntime version is 1.5.2", False),
        ("OneHot(11)", "onnxruntime==0.5.0", False),
        ("TreeEnsembleRegressor(3)", "onnxruntime==1.10.0", False),
        # below opset 7 no release implements it: converting the model is the fix
        ("Relu(6)", "onnxruntime==1.8.0", False),
        # a custom operator, no release shown, a release past the table's rows
        ("MyOp(1)", "onnxruntime==1.8.0", False),
        ("OneHot(11)", "", False),
        ("OneHot(11)", "onnxruntime==1.20.1", False),
    ],
)
def test_the_node_opset_is_implemented_only_within_the_shown_release(
    node: str, shown: str, implemented: bool
) -> None:
    texts = [_NOT_IMPLEMENTED.format(node=node), shown]
    assert node_opset_implemented(texts) is implemented
    assert ("node-opset-implemented" in platform_facts(texts)) is implemented


def test_an_implemented_opset_gets_the_cast_and_never_the_upgrade() -> None:
    ctx = message_context(
        _NOT_IMPLEMENTED.format(node="OneHot(11)"),
        _RUNBOOK,
        logs=("My onnxruntime version is 1.5.2, and onnx version is 1.7.0.",),
    )
    suggestion = OfflineProvider().suggest(ctx)
    assert "Cast" in suggestion.action
    assert "Upgrade onnxruntime" not in suggestion.action


def test_an_opset_newer_than_the_release_still_gets_the_upgrade_among_the_steps() -> None:
    ctx = message_context(
        _NOT_IMPLEMENTED.format(node="Resize(19)"),
        _RUNBOOK,
        logs=("My onnxruntime version is 1.5.2",),
    )
    suggestion = OfflineProvider().suggest(ctx)
    assert "Upgrade onnxruntime" in f"{suggestion.action} {suggestion.reason}"


@pytest.mark.parametrize(("release", "contradicted"), [("1.5.2", True), ("1.16.0", False)])
def test_a_suggestion_to_upgrade_fails_validation_when_the_release_implements_the_opset(
    release: str, contradicted: bool
) -> None:
    ctx = AnalysisContext(
        error_type="NotImplemented",
        message=_NOT_IMPLEMENTED.format(node="OneHot(11)"),
        logs=[{"message": f"onnxruntime=={release}"}],
        evidence=evidence(_RUNBOOK),
    )
    answer = draft(
        "Upgrade onnxruntime, or bring the model into the opsets the installed runtime"
        " supports: re-export (`opset_version=` in `torch.onnx.export`).",
        "onnxruntime-not-implemented-node",
        "A newer version of the op needs a newer runtime.",
    )
    assert validate(answer, ctx).premises_ok is not contradicted


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=4))
def test_any_text_gives_an_answer(texts: list[str]) -> None:
    assert node_opset_implemented(texts) in (True, False)
