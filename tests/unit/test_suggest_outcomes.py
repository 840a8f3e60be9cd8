"""What ends up stored for each kind of LLM answer: the documented outcomes of `write_suggestion`.

A local server speaks OpenAI's `/v1/chat/completions`, driven through the real `openai`
client. Outcomes: a valid answer is kept; an invalid one (fabricated runbook, wrong
file:line) is re-asked with the validator's complaint; an unusable answer (malformed,
server errors, timeout) falls back to the offline provider.
"""

from __future__ import annotations

import json
import time

import pytest
from werkzeug import Request, Response

from ingest.parsing.frames import make_frame
from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.providers import OpenAIProvider
from rca.suggestion.suggest import write_suggestion
from tests.support.evidence import chat_completion

SLUG = "matmul-shape-mismatch-linear"


def _ctx() -> AnalysisContext:
    return AnalysisContext(
        error_type="RuntimeError",
        message="mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        frames=[
            make_frame("/srv/ranker/serve.py", "predict", 88, in_app=True),
            make_frame("/srv/ranker/model.py", "forward", 41, in_app=True),
        ],
        shape_diff=[{"tensor": None, "op": "matmul", "expected": [None, 512], "actual": [4, 256]}],
        inference_context={"model_id": "ranker-v3", "batch_size": 4},
        evidence=[
            Evidence(
                slug=SLUG,
                title="Linear layer input size does not match in_features",
                failure_class="matmul_shape_mismatch",
                text="mat1 and mat2 shapes cannot be multiplied: the layer's in_features ...",
                remediation=(
                    "**Set `in_features` to the real input width.** Reason: the "
                    "weight needs as many input columns as the features produced.",
                ),
                score=0.9,
            )
        ],
    )


GOOD = {
    "action": "Set the head's in_features to 256.",
    "reason": "The head expects 512 input features but model.py:41 feeds it 256.",
    "runbook": SLUG,
    "confidence": 0.8,
}


class Script:
    """Answers in order (the last one repeats); records every request body."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.requests: list[dict] = []

    def __call__(self, request: Request) -> Response:
        self.requests.append(json.loads(request.data))
        answer = self.answers[min(len(self.requests), len(self.answers)) - 1]
        if isinstance(answer, Response):
            return answer
        if callable(answer):
            return answer()
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return Response(json.dumps(chat_completion(content)), content_type="application/json")


@pytest.fixture
def llm(httpserver):
    def make(*answers, timeout: float = 5, retries: int = 2) -> tuple[OpenAIProvider, Script]:
        script = Script(*answers)
        httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(
            script
        )
        return OpenAIProvider(
            "sk-test", httpserver.url_for("/v1"), "test-llm", timeout, retries
        ), script

    return make


def test_good_answer_is_stored_as_written(llm):
    provider, script = llm(GOOD)
    outcome = write_suggestion(_ctx(), provider)
    assert outcome.draft.provider == "openai" and outcome.draft.action == GOOD["action"]
    assert outcome.validation.ok
    assert len(script.requests) == 1


def test_the_request_carries_the_signals_inside_untrusted_delimiters(llm):
    provider, script = llm(GOOD)
    write_suggestion(_ctx(), provider)
    [request] = script.requests
    user = "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")
    assert "mat1 and mat2 shapes cannot be multiplied" in user
    assert "/srv/ranker/model.py" in user and "forward" in user
    assert "512" in user and "256" in user
    assert f'<untrusted-data source="runbook:{SLUG}">' in user
    assert "</untrusted-data>" in user
    assert request["response_format"] == {"type": "json_object"}


def test_fabricated_runbook_is_reasked_with_the_complaint_then_kept(llm):
    provider, script = llm({**GOOD, "runbook": "made-up-runbook"}, GOOD)
    outcome = write_suggestion(_ctx(), provider)
    assert len(script.requests) == 2
    assert "made-up-runbook" in script.requests[1]["messages"][-1]["content"]
    assert outcome.draft.provider == "openai" and outcome.validation.ok
    assert [a["ok"] for a in outcome.attempts] == [False, True]


def test_wrong_file_and_line_is_reasked_and_a_persistent_liar_ends_offline(llm):
    liar = {**GOOD, "reason": "The bug is in trainer.py:977 where the head is built."}
    provider, script = llm(liar)
    outcome = write_suggestion(_ctx(), provider)
    assert len(script.requests) == 3  # asked, then re-asked twice with the complaint
    assert "trainer.py" in script.requests[1]["messages"][-1]["content"]
    assert outcome.draft.provider == "offline"  # the fallback answers
    assert outcome.validation.ok
    assert [a["provider"] for a in outcome.attempts] == ["openai"] * 3 + ["offline"]


def test_malformed_answer_falls_back_to_offline(llm):
    provider, _ = llm("I think you should check your shapes, good luck!")
    outcome = write_suggestion(_ctx(), provider)
    assert outcome.draft.provider == "offline" and outcome.validation.ok
    assert "error" in outcome.attempts[0]


def test_rate_limit_then_success_is_stored_from_the_llm(llm):
    limited = Response(
        json.dumps({"error": {"message": "slow down"}}),
        status=429,
        headers={"Retry-After": "1"},
        content_type="application/json",
    )
    provider, script = llm(limited, GOOD)
    started = time.monotonic()
    outcome = write_suggestion(_ctx(), provider)
    assert time.monotonic() - started >= 0.9  # the client waited as asked
    assert len(script.requests) == 2
    assert outcome.draft.provider == "openai" and outcome.validation.ok


def test_timeout_falls_back_to_offline(llm):
    def slow() -> Response:
        time.sleep(1.5)
        return Response(
            json.dumps(chat_completion(json.dumps(GOOD))), content_type="application/json"
        )

    provider, _ = llm(slow, timeout=0.5, retries=0)
    outcome = write_suggestion(_ctx(), provider)
    assert outcome.draft.provider == "offline" and outcome.validation.ok
    assert "timed out" in outcome.attempts[0]["error"]
