"""A setting the message rules out fails in the other spellings an LLM writes (re-review of
tonight's rules): ``strict`` turned off positionally or in prose when every learned weight is
missing, the start method set through vLLM's environment variable when the message says it
must use spawn, a pretrained configuration's dimension written as ``config.json`` does.
The right answers next to them keep passing.
"""

from __future__ import annotations

import pytest

from rca.evaluation.run import case_incident
from rca.suggestion.evidence import context_for
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import draft, evidence

#: Dev cases and the runbook their answers cite.
SLUGS = {
    "rw006": "checkpoint-keys-module-prefix",
    "rp001": "cuda-fork-subprocess-reinit",
    "c047": "seq-too-long-tokenizer-truncation",
}


def _verdict(case: str, action: str):  # noqa: ANN202 - the validation's result
    ctx = context_for(case_incident(dev_case(case)), evidence((SLUGS[case], 0.9)))
    return validate(draft(action, SLUGS[case], "Because."), ctx)


@pytest.mark.parametrize(
    ("case", "action"),
    [
        ("rw006", "Load with model.load_state_dict(sd, False)."),
        (
            "rw006",
            "Pass strict as False when calling load_state_dict so the missing keys are skipped.",
        ),
        ("rw006", "Call model.load_state_dict(torch.load(path), False)."),
        ("rp001", "Set VLLM_WORKER_MULTIPROC_METHOD=fork."),
        ("rp001", "Export VLLM_WORKER_MULTIPROC_METHOD='fork' before starting vLLM."),
        ("c047", 'Edit config.json so that "max_position_embeddings": 3000.'),
    ],
)
def test_the_other_spelling_of_a_ruled_out_setting_fails_on_its_premise(
    case: str, action: str
) -> None:
    verdict = _verdict(case, action)
    assert not verdict.premises_ok, action


@pytest.mark.parametrize(
    ("case", "action"),
    [
        (
            "rw006",
            "Strip the module. prefix from the keys, then call"
            " model.load_state_dict(sd, strict=True).",
        ),
        ("rw006", "Remove the 'module.' prefix from each key, then model.load_state_dict(new)."),
        ("rp001", "Set VLLM_WORKER_MULTIPROC_METHOD=spawn before starting the vLLM worker."),
        (
            "rp001",
            "Switch the start method from fork to spawn (VLLM_WORKER_MULTIPROC_METHOD=spawn).",
        ),
        (
            "c047",
            'Keep "max_position_embeddings": 512 in config.json and truncate the inputs to'
            " 512 tokens.",
        ),
        (
            "c047",
            'Build the model with from_config after setting "max_position_embeddings": 3000'
            " and train it from scratch.",
        ),
    ],
)
def test_the_right_answers_next_to_them_keep_their_premises(case: str, action: str) -> None:
    verdict = _verdict(case, action)
    assert verdict.premises_ok, verdict.complaints
