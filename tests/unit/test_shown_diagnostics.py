"""A step that has the user turn on a diagnostic is no fix when the incident already shows
that diagnostic's output: NCCL's debug lines (``nccl-debug-shown``), the ONNX parser's errors
(``parser-errors-shown``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.context import AnalysisContext
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.shown_diagnostics import (
    NCCL_DEBUG_SHOWN,
    PARSER_ERRORS_SHOWN,
    shown_diagnostic_facts,
)
from rca.suggestion.validation import validate
from tests.support.evidence import draft, evidence, message_context

_NCCL = ("nccl-version-network-ib", 0.9)
_TRT = ("tensorrt-onnx-parse-failed-no-output", 0.9)
_NCCL_ERROR = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1275, unhandled system error (run with NCCL_DEBUG=INFO for details),"
    " NCCL version 2.14.3\nncclSystemError: System call (e.g. socket, malloc) or external"
    " library call failed or device error."
)
_NCCL_WARN = "node1:73025:73112 [0] NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate"
_NCCL_INFO = "node1:73025:73112 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0"
_NO_OUTPUT = (
    "[02/26/2021-10:04:39] [E] [TRT] Network must have at least one output\n"
    "[02/26/2021-10:04:39] [E] [TRT] Network validation failed."
)
_RERUN = (
    "Rerun with `NCCL_DEBUG=INFO` and fix what its `NCCL WARN` line names: `--ipc=host` /"
    " `--shm-size` for a `/dev/shm` failure, `NCCL_SOCKET_IFNAME` or the firewall for a socket one."
)
_PARSER = "ERROR: ModelImporter.cpp:92 In function parseGraph:\n[8] Assertion failed: convert"


@pytest.mark.parametrize(
    ("texts", "facts"),
    [
        ([_NCCL_ERROR, _NCCL_WARN], {NCCL_DEBUG_SHOWN}),
        ([_NCCL_ERROR, _NCCL_INFO], {NCCL_DEBUG_SHOWN}),
        ([_NCCL_ERROR], set()),
        (["set NCCL_DEBUG=INFO and rerun"], set()),
        ([_PARSER, _NO_OUTPUT], {PARSER_ERRORS_SHOWN}),
        (
            ["[E] [TRT] ModelImporter.cpp:771: While parsing node number 3 [Resize]:"],
            {PARSER_ERRORS_SHOWN},
        ),
        (
            ["[E] In node 3 with name: Round_5 and operator: Round (checkFallbackPluginImporter)"],
            {PARSER_ERRORS_SHOWN},
        ),
        (["[E] Failed to parse onnx file", _NO_OUTPUT], set()),
        ([], set()),
    ],
)
def test_the_facts_need_the_diagnostic_output_itself(texts: list[str], facts: set[str]) -> None:
    assert shown_diagnostic_facts(texts) == facts


@pytest.mark.parametrize(("logs", "rerun"), [((_NCCL_INFO,), False), ((), True)])
def test_nccl_debug_output_shown_is_never_told_to_rerun_with_it(
    logs: tuple[str, ...], rerun: bool
) -> None:
    action = OfflineProvider().suggest(message_context(_NCCL_ERROR, _NCCL, logs=logs)).action
    assert action.startswith("Rerun with `NCCL_DEBUG=INFO`") is rerun


@pytest.mark.parametrize(("shown", "print_errors"), [(_PARSER, False), ("", True)])
def test_parser_errors_shown_are_never_told_to_be_printed(shown: str, print_errors: bool) -> None:
    message = f"{shown}\n{_NO_OUTPUT}".strip()
    action = OfflineProvider().suggest(message_context(message, _TRT)).action
    assert action.startswith("Check the parse result and print the parser's errors") is (
        print_errors
    )


@pytest.mark.parametrize(
    ("runbook", "message", "logs", "action", "contradicted"),
    [
        (
            _NCCL,
            _NCCL_ERROR,
            [_NCCL_WARN],
            _RERUN,
            True,
        ),
        (
            _NCCL,
            _NCCL_ERROR,
            [],
            _RERUN,
            False,
        ),
        (
            _TRT,
            f"{_PARSER}\n{_NO_OUTPUT}",
            [],
            "Check the parse result and print the parser's"
            " errors (`parser.get_error(i)`) before building.",
            True,
        ),
        (
            _TRT,
            _NO_OUTPUT,
            [],
            "Check the parse result and print the parser's errors"
            " (`parser.get_error(i)`) before building.",
            False,
        ),
    ],
)
def test_a_suggestion_to_turn_on_a_shown_diagnostic_fails_validation(
    runbook: tuple[str, float], message: str, logs: list[str], action: str, contradicted: bool
) -> None:
    ctx = AnalysisContext(
        error_type="",
        message=message,
        logs=[{"message": line} for line in logs],
        evidence=evidence(runbook),
    )
    answer = draft(action, runbook[0], "It names the cause.")
    assert validate(answer, ctx).premises_ok is not contradicted


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=4))
def test_any_text_gives_an_answer(texts: list[str]) -> None:
    assert shown_diagnostic_facts(texts) <= {NCCL_DEBUG_SHOWN, PARSER_ERRORS_SHOWN}
