"""The format rule knows the imperatives fix instructions open with (issue 16, review
finding 12).

An LLM re-asked because "Find the parameters that get no gradient ..." does not start with
an imperative verb loses a round for nothing. The verbs are data
(``rca/knowledge/imperative-verbs.toml``); an action may open with a negative imperative
when an instruction follows it ("Do not set X again; make ...").
"""

from __future__ import annotations

import pytest

from rca.suggestion.validation import IMPERATIVE_VERBS, format_ok

REASON = "The message says the option is already on."


@pytest.mark.parametrize(
    "action",
    [
        "Find the parameters that get no gradient with `TORCH_DISTRIBUTED_DEBUG=DETAIL`.",
        "Leave `find_unused_parameters=True` as is and make every output feed the loss.",
        "Print the model to see its module names.",
        "Target the `query_key_value` layers in `LoraConfig`.",
        "Redefine `forward` so every output contributes to the loss.",
        "Purge the 535 driver packages before installing 550.",
        "Do not set `find_unused_parameters=True` again; make every `forward` output count.",
        "Don't reinstall the driver; rebuild the extension against CUDA 12.1.",
        "Never cast the input to int64, but keep it int32.",
        "Identify the layer whose output is unused.",
        "Monitor GPU memory with `nvidia-smi` while training.",
    ],
)
def test_common_imperatives_open_an_action(action: str) -> None:
    assert format_ok(action, REASON) == (True, "")


@pytest.mark.parametrize(
    "action",
    [
        "Do not set `find_unused_parameters=True` again.",
        "Never reinstall the driver.",
        "The layer is too small.",
        "Consider setting `find_unused_parameters=True`.",
        "Note that the driver is too old.",
        "Setting in_features to 256.",
    ],
)
def test_a_refusal_alone_hedges_and_statements_are_no_instruction(action: str) -> None:
    ok, problem = format_ok(action, REASON)
    assert not ok and "imperative verb" in problem


def test_the_verbs_are_lower_case_words() -> None:
    assert len(IMPERATIVE_VERBS) > 300
    assert all(verb == verb.lower() and " " not in verb for verb in IMPERATIVE_VERBS)


def test_the_format_rule_and_the_report_reader_read_one_verb_list() -> None:
    """A verb added to the knowledge file opens an action and ends a reason clause alike."""
    from rca.suggestion import imperative_verbs, reported_clauses

    assert IMPERATIVE_VERBS is imperative_verbs.IMPERATIVE_VERBS
    assert not hasattr(reported_clauses, "_VERBS_FILE")
