"""The LLM path gets the same premises as the offline one (issue 16 item 7).

A local server speaks OpenAI's `/v1/chat/completions` through the real `openai` client. The
prompt carries the incident's facts and the steps' conditions; an answer the incident
contradicts (turning on an option the message says is already on, restating a step whose
premise fails) is re-asked with the complaint and never stored as valid; a good one is kept.
"""

from __future__ import annotations

import pytest

from rca.suggestion.context import AnalysisContext
from rca.suggestion.providers import OpenAIProvider
from rca.suggestion.suggest import write_suggestion
from tests.support.dev_cases import dev_case
from tests.support.evidence import evidence
from tests.support.scripted_llm import scripted_llm

SLUG = "ddp-unused-parameters"
#: PyTorch's reducer adds this sentence to the error when the option is already on.
ALREADY_ON = (
    " Since `find_unused_parameters=True` is enabled, this likely  means that not all"
    " `forward` outputs participate in computing loss."
)
VIOLATING = {
    "action": "Set `find_unused_parameters=True` when wrapping the model in DDP.",
    "reason": "DDP then marks parameters that did not take part in the forward pass as ready.",
    "runbook": SLUG,
    "confidence": 0.9,
}
GOOD = {
    "action": "Remove or freeze the parameters that never reach the loss.",
    "reason": "With find_unused_parameters already on, some forward outputs do not take part"
    " in the loss; frozen parameters are excluded from the reduction.",
    "runbook": SLUG,
    "confidence": 0.7,
}


def _ctx() -> AnalysisContext:
    case = dev_case("ra001")
    return AnalysisContext(
        error_type=case["exception_type"],
        message=case["message"] + ALREADY_ON,
        evidence=evidence((SLUG, 0.9)),
    )


@pytest.fixture
def llm(httpserver):
    def make(*answers: dict) -> tuple[OpenAIProvider, list[dict]]:
        return scripted_llm(httpserver, *answers)

    return make


def _user(request: dict) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


def test_the_prompt_carries_the_facts_and_the_steps_conditions(llm):
    provider, requests = llm(GOOD)
    write_suggestion(_ctx(), provider)
    user = _user(requests[0])
    assert "already set: find_unused_parameters=True" in user
    assert "[conditions: turns on: find_unused_parameters]" in user
    system = requests[0]["messages"][0]["content"]
    assert "already set" in system


def test_a_good_answer_passes(llm):
    provider, requests = llm(GOOD)
    outcome = write_suggestion(_ctx(), provider)
    assert outcome.draft.provider == "openai" and outcome.draft.action == GOOD["action"]
    assert outcome.validation.ok and outcome.validation.premises_ok
    assert len(requests) == 1


def test_a_premise_violating_answer_is_reasked_then_the_corrected_one_kept(llm):
    provider, requests = llm(VIOLATING, GOOD)
    outcome = write_suggestion(_ctx(), provider)
    assert len(requests) == 2
    first = outcome.attempts[0]
    assert first["provider"] == "openai" and not first["ok"]
    assert any("already set" in complaint for complaint in first["complaints"])
    reask = requests[1]["messages"][-1]["content"]
    assert "find_unused_parameters=True is already set" in reask
    assert outcome.draft.action == GOOD["action"] and outcome.validation.ok


def test_a_model_that_keeps_violating_never_ends_as_a_valid_suggestion(llm):
    provider, requests = llm(VIOLATING)
    outcome = write_suggestion(_ctx(), provider)
    assert len(requests) == 3  # the first ask and two re-asks
    assert all(not a["ok"] for a in outcome.attempts if a.get("provider") == "openai")
    # The offline fallback never restates the contradicted step either.
    assert outcome.draft.provider == "offline"
    assert "find_unused_parameters" not in outcome.draft.action
    assert outcome.validation.ok
