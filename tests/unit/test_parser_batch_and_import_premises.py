"""Two premises the incident's own text contradicts (issue 16, item 2).

- TensorRT's ONNX parser checks for an explicit-batch network before it imports a node, so
  parser errors that name a node, a weight or an operator without speaking of the batch
  dimension say the network had it: "create the network with the explicit-batch flag" is
  no fix (``parser-error-not-batch``).
- "cannot import name X from Y" is raised after module Y was imported: Y's package is
  installed, and "install the package the import error names" adds no name to it
  (``public-name-missing`` / ``internal-name-missing``, read from that sentence).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.shown_diagnostics import PARSER_ERROR_NOT_BATCH, parser_cause_facts
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context

_TRT = ("tensorrt-onnx-parse-failed-no-output", 0.9)
_VLLM = ("vllm-model-architecture-inspect-failed", 0.9)
_NO_OUTPUT = "[E] [TRT] Network must have at least one output\n[E] [TRT] Network validation failed."
_WEIGHTS = (
    "ERROR: ModelImporter.cpp:92 In function parseGraph:\n"
    "[8] Assertion failed: convertOnnxWeights(initializer, &weights, ctx)"
)
_IMPLICIT = (
    "ERROR: ModelImporter.cpp:{line} In function importModel:\n[4] Assertion failed:"
    ' !_importer_ctx.network()->hasImplicitBatchDimension() && "This version of the ONNX'
    " parser only supports TensorRT INetworkDefinitions with an explicit batch dimension."
    ' Please ensure the network was initialized with an explicit batch dimension"'
)
_EXPLICIT_STEP = "Create the network with the explicit-batch flag"


@pytest.mark.parametrize(
    ("texts", "not_batch"),
    [
        ([_WEIGHTS, _NO_OUTPUT], True),
        (["[E] [TRT] ModelImporter.cpp:771: While parsing node number 3 [Resize]:"], True),
        (
            ["[E] In node 7 with name: Round_5 and operator: Round (checkFallbackPluginImporter)"],
            True,
        ),
        ([_IMPLICIT.format(line=1012), _NO_OUTPUT], False),
        # the user's own code shows the flag: the batch is spoken of, nothing is claimed
        ([_WEIGHTS, "network = builder.create_network(EXPLICIT_BATCH)"], False),
        # no parser error shown: only the summary
        (["[E] Failed to parse onnx file", _NO_OUTPUT], False),
        ([], False),
    ],
)
def test_the_parser_fact_needs_errors_that_do_not_speak_of_the_batch(
    texts: list[str], not_batch: bool
) -> None:
    assert (PARSER_ERROR_NOT_BATCH in parser_cause_facts(texts)) is not_batch


@pytest.mark.parametrize(("shown", "explicit"), [(_WEIGHTS, False), (_IMPLICIT, True)])
def test_the_explicit_batch_step_is_the_action_only_when_the_parser_asks_for_it(
    shown: str, explicit: bool
) -> None:
    message = f"{shown.format(line=1012)}\n{_NO_OUTPUT}"
    action = OfflineProvider().suggest(message_context(message, _TRT)).action
    assert action.startswith(_EXPLICIT_STEP) is explicit, action


@pytest.mark.parametrize(("shown", "contradicted"), [(_WEIGHTS, True), (_IMPLICIT, False)])
def test_an_answer_creating_an_explicit_batch_network_fails_when_the_parser_named_another_cause(
    shown: str, contradicted: bool
) -> None:
    answer = draft(
        "Create the network with the explicit-batch flag (`builder.create_network(1 <<"
        " int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))`) on TensorRT 7 and 8.",
        _TRT[0],
    )
    ctx = message_context(f"{shown.format(line=1012)}\n{_NO_OUTPUT}", _TRT)
    assert (not validate(answer, ctx).premises_ok) is contradicted


# --------------------------------------------------------------------------- imports

_INSTALL_STEP = "Read the import error logged above the message and install the package"
_INSPECT = (
    "ValueError: Model architectures ['{arch}'] failed to be inspected. Please check the logs"
    " for more details."
)


@settings(max_examples=25, deadline=None)
@given(
    module=st.sampled_from(
        ["torch.distributed.elastic.agent.server.api", "transformers", "accelerate.utils", "x._c"]
    ),
    name=st.sampled_from(["log", "is_torch_npu_available", "LlamaRotaryEmbedding", "_ops"]),
)
def test_a_name_missing_from_an_imported_module_is_never_told_to_install_it(
    module: str, name: str
) -> None:
    message = f"ImportError: cannot import name '{name}' from '{module}'"
    ctx = message_context(f"{_INSPECT.format(arch='QWenLMHeadModel')}\n{message}", _VLLM)
    assert {"public-name-missing", "internal-name-missing"} & read_premises(ctx).facts
    action = OfflineProvider().suggest(ctx).action
    assert not action.startswith(_INSTALL_STEP), action
    answer = draft(
        "Read the import error logged above the message and install the package it names"
        " (or the model's extra dependency), then restart the engine.",
        _VLLM[0],
    )
    assert not validate(answer, ctx).premises_ok


def test_a_module_that_is_not_installed_still_gets_the_install_step() -> None:
    message = "ModuleNotFoundError: No module named 'tiktoken'"
    ctx = message_context(f"{_INSPECT.format(arch='QWenLMHeadModel')}\n{message}", _VLLM)
    assert OfflineProvider().suggest(ctx).action.startswith(_INSTALL_STEP)


@given(
    st.text(
        alphabet=st.sampled_from(list("ModelImporter.cpp In node 3 with name: explicit batch\n")),
        max_size=3000,
    )
)
def test_arbitrary_text_never_raises(text: str) -> None:
    parser_cause_facts([text])
