"""The LLM path gets the same premises as the offline one (issue 16 item 7).

A local server speaks OpenAI's `/v1/chat/completions` through the real `openai` client. The
prompt carries the incident's facts and the steps' conditions; an answer the incident
contradicts (turning on an option the message says is already on, restating a step whose
premise fails) is re-asked with the complaint and never stored as valid; a good one is kept.
"""

from __future__ import annotations

import pytest

from rca.suggestion.context import AnalysisContext
from rca.suggestion.premises import read_premises
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
    assert "[conditions: turns on: find_unused_parameters | written for: pytorch]" in user
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


# The facts the newer premises read reach the prompt the same way: every premise line read
# from the incident is in the prompt's fenced incident block (issue 16, must-show 7).
_SMI = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |"
_INSUFFICIENT = (
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
)
_DRIVER_SLUG = "cuda-driver-too-old"
_FACT_CASES = {
    "installed driver": (
        AnalysisContext(
            error_type="RuntimeError",
            message=_INSUFFICIENT,
            logs=[{"message": _SMI}],
            evidence=evidence((_DRIVER_SLUG, 0.9)),
        ),
        "installed NVIDIA driver: 535.104.05",
    ),
    "modules PEFT lists as not found": (
        AnalysisContext(
            error_type="ValueError",
            message="Target modules {'q_proj', 'v_proj'} not found in the base model. Please"
            " check the target modules and try again.",
            evidence=evidence(("peft-target-modules-not-found", 0.9)),
        ),
        "not in the model: q_proj, v_proj",
    ),
    "NCCL's last error shown": (
        AnalysisContext(
            error_type="torch.distributed.DistBackendError",
            message="NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970,"
            " unhandled system error, NCCL version 2.19.3\nncclSystemError: System call (e.g."
            " socket, malloc) or external library call failed or device error.\nLast error:\n"
            "socketStartConnect: Connect to 10.0.0.2<45678> failed : Connection refused",
            evidence=evidence(("nccl-version-network-ib", 0.9)),
        ),
        "nccl-debug-shown: NCCL's debug lines",
    ),
    "kernel error from a compiled extension": (
        AnalysisContext(
            error_type="RuntimeError",
            message="CUDA kernel failed : no kernel image is available for execution on the device",
            evidence=evidence(("cuda-no-kernel-image-arch", 0.9)),
        ),
        "cuda-kernel-in-extension: a compiled extension's own code reported the CUDA error",
    ),
}


def _incident_block(user: str) -> str:
    start = user.index('<untrusted-data source="incident">')
    return user[start : user.index("</untrusted-data>", start)]


@pytest.mark.parametrize("name", sorted(_FACT_CASES))
def test_every_premise_read_from_the_incident_is_in_the_fenced_facts(llm, name):
    ctx, expected = _FACT_CASES[name]
    provider, requests = llm(GOOD)
    write_suggestion(ctx, provider)
    block = _incident_block(_user(requests[0]))
    assert expected in block
    facts = block[block.index("incident facts:") :]
    for line in read_premises(ctx).as_lines():
        assert line in facts


DOWNGRADE = {
    "action": "Downgrade the driver to 470.",
    "reason": "The driver does not match the CUDA runtime version.",
    "runbook": _DRIVER_SLUG,
    "confidence": 0.8,
}
CUDA_BUILD = {
    "action": "Install the CUDA 12.2 build of PyTorch.",
    "reason": "The installed driver supports CUDA up to 12.2; the wheel was built for a newer"
    " CUDA runtime.",
    "runbook": _DRIVER_SLUG,
    "confidence": 0.7,
}


def test_an_answer_moving_the_driver_below_the_installed_one_never_ends_valid(llm):
    ctx = _FACT_CASES["installed driver"][0]
    provider, requests = llm(DOWNGRADE)
    outcome = write_suggestion(ctx, provider)
    assert len(requests) == 3
    llm_attempts = [a for a in outcome.attempts if a.get("provider") == "openai"]
    assert llm_attempts and not any(a["ok"] for a in llm_attempts)
    assert "older than the one installed (535.104.05)" in " ".join(llm_attempts[0]["complaints"])
    assert "older than the one installed" in requests[1]["messages"][-1]["content"]
    assert outcome.draft.provider == "offline" and "470" not in outcome.draft.action


def test_an_answer_within_the_installed_driver_passes(llm):
    provider, requests = llm(CUDA_BUILD)
    outcome = write_suggestion(_FACT_CASES["installed driver"][0], provider)
    assert len(requests) == 1
    assert outcome.draft.action == CUDA_BUILD["action"] and outcome.validation.ok
