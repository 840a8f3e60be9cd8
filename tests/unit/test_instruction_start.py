"""The format rule finds the instruction where it starts (re-review of tonight's validation).

Right answers were re-asked for their opening: an aside in brackets after a negative
imperative ("Do not change max_position_embeddings (512); ..." -> "not '512'", "Don't use
strict=False (it would ...); ..." -> "not 'it'") and a lead clause before the verb ("Instead
of the default 32768, pass ...", "If the image was loaded as (256, 256, 3), permute it ...").
A statement is still no instruction, with or without a lead clause.
"""

from __future__ import annotations

import pytest

from rca.suggestion.imperative_verbs import past_lead_clauses, without_asides
from rca.suggestion.validation import format_ok
from tests.support.linear_time import assert_linear


@pytest.mark.parametrize(
    "action",
    [
        "Do not change max_position_embeddings (512); truncate the inputs to 512 tokens.",
        "Don't use strict=False (it would leave every layer random); strip the module. prefix"
        " from the keys instead.",
        "Do not reshape to (1, 256, 256, 3); use low_cont.unsqueeze(0) to get (1, 3, 256, 256).",
        "Never pass strict=False [every key is missing]; rename the keys instead.",
        "Instead of the default 32768, pass --max-model-len 4096.",
        "If the image was loaded as (256, 256, 3), permute it to (3, 256, 256) and then"
        " unsqueeze to (1, 3, 256, 256).",
        "When the server starts, pass --max-model-len 4096.",
        "To keep the learned weights, load them with strict=True.",
        "If the checkpoint came from DDP, then strip the module. prefix from its keys.",
        "If it fails on `x[0, 1]`, run it with CUDA_LAUNCH_BLOCKING=1.",
        "For vLLM, pip install vllm==0.4.0 and restart the server.",
    ],
)
def test_an_instruction_past_an_aside_or_a_lead_clause_is_read(action: str) -> None:
    assert format_ok(action, "Because.") == (True, "")


@pytest.mark.parametrize(
    "action",
    [
        "It is a driver problem.",
        "The model is too big.",
        "If it fails, it is a driver problem.",
        "If the model is too big.",
        "Instead of 32768, 4096 is better.",
        "When the cache is full, the server (vLLM) rejects the request.",
        "Do not change max_position_embeddings (512).",
    ],
)
def test_a_statement_is_still_no_instruction(action: str) -> None:
    ok, problem = format_ok(action, "Because.")
    assert not ok and "imperative verb" in problem


def test_finding_the_instruction_is_linear() -> None:
    assert_linear(lambda size: past_lead_clauses("If " + "(a, `b, " * size + "), set x."))
    assert_linear(lambda size: without_asides("Do not (a [b `c) " * size + "; set x."))
