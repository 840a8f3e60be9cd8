"""Providers: the OpenAI client against a local chat-completions server, and the offline one."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from werkzeug import Request, Response

from ingest.parsing.logs import parse_logs
from ingest.parsing.shapes import ShapeDiff, extract_shape_diff
from ingest.parsing.stacktrace import parse_stacktrace
from rca.context import AnalysisContext, evidence_from_runbook
from rca.corpus import bundled_runbook_dir, load_directory
from rca.providers import (
    OfflineProvider,
    OpenAIProvider,
    ProviderError,
    parse_answer,
    provider_from_settings,
)
from rca.validation import validate

CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"
MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "signals"}]
ANSWER = {
    "action": "Set in_features of the first Linear layer to 256.",
    "reason": "The flattened input has 256 features while the layer expects 512.",
    "runbook": "matmul-shape-mismatch-linear",
    "confidence": 0.8,
}


def _completion(content: str, usage: dict | None = None) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "local-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": usage or {"prompt_tokens": 321, "completion_tokens": 54, "total_tokens": 375},
    }


def _ok(content: str) -> Response:
    return Response(json.dumps(_completion(content)), 200, content_type="application/json")


def _error(status: int, message: str = "boom", **headers: str) -> Response:
    body = {"error": {"message": message, "type": "server_error", "code": None}}
    return Response(json.dumps(body), status, headers=headers, content_type="application/json")


class ChatServer:
    """Serves the queued responses in order and records each request body and time."""

    def __init__(self, httpserver, responses) -> None:
        self.responses = list(responses)
        self.requests: list[dict] = []
        self.times: list[float] = []
        httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(
            self._handle
        )
        self.base_url = httpserver.url_for("/v1")

    def _handle(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        self.requests.append(body)
        self.times.append(time.monotonic())
        response = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        return response if isinstance(response, Response) else response(body)

    def provider(self, **kwargs) -> OpenAIProvider:
        return OpenAIProvider("sk-test", self.base_url, "local-model", **kwargs)


# --------------------------------------------------------------------------- parse_answer


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(ANSWER),
        f"Here is my answer:\n```json\n{json.dumps(ANSWER, indent=2)}\n```\nHope it helps!",
        f"```\n{json.dumps(ANSWER)}\n```",
        f"Sure. {json.dumps(ANSWER)} Let me know {{if}} you need more.",
        f'Draft: {{"note": "x"}} final: {json.dumps(ANSWER)}',
    ],
)
def test_answer_is_found_in_bare_json_fences_or_prose(text):
    assert parse_answer(text)["action"] == ANSWER["action"]


@pytest.mark.parametrize("text", ["", "I think you should restart it.", "{not json}", "[1, 2]"])
def test_text_without_an_answer_object_is_a_provider_error(text):
    with pytest.raises(ProviderError, match="action|empty"):
        parse_answer(text)


# --------------------------------------------------------------------------- OpenAI provider


def test_good_json_answer_becomes_a_draft_with_usage_and_latency(httpserver):
    server = ChatServer(httpserver, [_ok(json.dumps(ANSWER))])
    draft = server.provider().suggest(MESSAGES)
    assert (draft.action, draft.reason, draft.runbook) == (
        ANSWER["action"],
        ANSWER["reason"],
        ANSWER["runbook"],
    )
    assert draft.confidence == 0.8
    assert (draft.provider, draft.model) == ("openai", "local-model")
    assert draft.usage == {"prompt_tokens": 321, "completion_tokens": 54, "total_tokens": 375}
    assert draft.latency_ms >= 0
    assert draft.raw == json.dumps(ANSWER)
    sent = server.requests[0]
    assert sent["messages"] == MESSAGES
    assert sent["model"] == "local-model"
    assert sent["response_format"] == {"type": "json_object"}


def test_answer_in_a_json_fence_with_prose_is_parsed(httpserver):
    text = f"Looking at the frames...\n```json\n{json.dumps(ANSWER)}\n```\nGood luck."
    server = ChatServer(httpserver, [_ok(text)])
    draft = server.provider().suggest(MESSAGES)
    assert draft.runbook == "matmul-shape-mismatch-linear"
    assert draft.raw == text


def test_rate_limit_is_retried_after_the_delay_the_server_asks_for(httpserver):
    server = ChatServer(
        httpserver, [_error(429, "rate limited", **{"Retry-After": "0.3"}), _ok(json.dumps(ANSWER))]
    )
    draft = server.provider().suggest(MESSAGES)
    assert draft.action == ANSWER["action"]
    assert len(server.requests) == 2
    assert server.times[1] - server.times[0] >= 0.29


def test_server_errors_are_retried_until_success(httpserver):
    fail = _error(500, **{"retry-after-ms": "10"})
    server = ChatServer(httpserver, [fail, fail, _ok(json.dumps(ANSWER))])
    draft = server.provider(max_retries=2).suggest(MESSAGES)
    assert draft.runbook == ANSWER["runbook"]
    assert len(server.requests) == 3


def test_persistent_server_error_is_a_provider_error_after_the_retries(httpserver):
    server = ChatServer(httpserver, [_error(500, "overloaded", **{"retry-after-ms": "10"})])
    with pytest.raises(ProviderError, match="HTTP 500") as excinfo:
        server.provider(max_retries=2).suggest(MESSAGES)
    assert excinfo.value.status == 500
    assert len(server.requests) == 3


def test_server_rejecting_response_format_is_asked_again_without_it(httpserver):
    def strict(body: dict) -> Response:
        if "response_format" in body:
            return _error(400, "Unrecognized request argument supplied: response_format")
        return _ok(f"```json\n{json.dumps(ANSWER)}\n```")

    server = ChatServer(httpserver, [strict])
    provider = server.provider()
    assert provider.suggest(MESSAGES).action == ANSWER["action"]
    assert ["response_format" in body for body in server.requests] == [True, False]
    provider.suggest(MESSAGES)  # remembered: no second rejected attempt
    assert ["response_format" in body for body in server.requests] == [True, False, False]


def test_other_bad_requests_are_not_retried_without_json_mode(httpserver):
    server = ChatServer(httpserver, [_error(400, "messages too long")])
    with pytest.raises(ProviderError, match="HTTP 400"):
        server.provider().suggest(MESSAGES)
    assert len(server.requests) == 1


def test_garbage_answer_is_a_provider_error_keeping_the_raw_text(httpserver):
    server = ChatServer(httpserver, [_ok("I am not sure what went wrong, sorry.")])
    with pytest.raises(ProviderError, match="no JSON object") as excinfo:
        server.provider().suggest(MESSAGES)
    assert excinfo.value.raw == "I am not sure what went wrong, sorry."


def test_answer_missing_the_reason_is_a_provider_error(httpserver):
    server = ChatServer(httpserver, [_ok(json.dumps({"action": "Set x.", "runbook": "r"}))])
    with pytest.raises(ProviderError, match="reason"):
        server.provider().suggest(MESSAGES)


def test_slow_server_times_out_as_a_provider_error(httpserver):
    def slow(body: dict) -> Response:
        time.sleep(0.5)
        return _ok(json.dumps(ANSWER))

    server = ChatServer(httpserver, [slow])
    with pytest.raises(ProviderError, match="timed out"):
        server.provider(timeout=0.1, max_retries=0).suggest(MESSAGES)


# --------------------------------------------------------------------------- selection

_LLM_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RCA_LLM_MODEL")


def test_offline_provider_is_the_default_without_key_or_base_url(monkeypatch):
    for name in _LLM_VARS:
        monkeypatch.delenv(name, raising=False)
    provider, name = provider_from_settings()
    assert name == "offline"
    assert isinstance(provider, OfflineProvider)


def test_base_url_alone_selects_an_openai_compatible_server(monkeypatch):
    for name in _LLM_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("RCA_LLM_MODEL", "llama3.1:8b")
    provider, name = provider_from_settings()
    assert name == "openai"
    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "llama3.1:8b"


# --------------------------------------------------------------------------- offline provider


def _case(case_id: str) -> dict:
    for line in CASES.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["id"] == case_id:
            return case
    raise LookupError(case_id)


def _context(case: dict, slug: str, score: float = 0.72) -> AnalysisContext:
    """Build the context the pipeline would: parsed frames, logs and shapes, one runbook."""
    runbooks = {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}
    chain = parse_stacktrace(case["traceback"]) if case["traceback"] else []
    return AnalysisContext(
        error_type=case["exception_type"],
        message=case["message"],
        frames=chain[-1]["frames"] if chain else [],
        logs=parse_logs(case["logs"]),
        shape_diff=extract_shape_diff(case["message"]),
        inference_context={"framework": case["framework"]},
        evidence=[evidence_from_runbook(runbooks[slug], score)],
    )


@pytest.mark.parametrize(
    ("case_id", "slug"),
    [
        ("c001", "cuda-oom-inference"),
        ("c014", "matmul-shape-mismatch-incompatible-components"),
        ("c020", "conv-channel-mismatch-grayscale-rgba"),
        ("c023", "checkpoint-size-mismatch-vocab"),
        ("c029", "checkpoint-keys-module-prefix"),
        ("c045", "nan-loss-numerical-ops"),
        ("c047", "seq-too-long-tokenizer-truncation"),
        ("c106", "version-transformers-import-error"),
    ],
)
def test_offline_draft_on_real_case_validates_and_cites_the_runbook(case_id, slug):
    ctx = _context(_case(case_id), slug)
    draft = OfflineProvider().suggest(ctx)
    result = validate(draft, ctx)
    assert result.ok, (draft, result.complaints)
    assert draft.runbook == slug
    assert (draft.provider, draft.model) == ("offline", OfflineProvider.model)
    assert draft.confidence == 0.72


def test_offline_reason_names_the_mismatched_dimensions():
    ctx = _context(_case("c014"), "matmul-shape-mismatch-incompatible-components")
    assert "4096 instead of 768" in OfflineProvider().suggest(ctx).reason


def test_offline_reason_names_the_failing_frame_exactly_as_in_the_frames():
    ctx = _context(_case("c045"), "nan-loss-numerical-ops")
    reason = OfflineProvider().suggest(ctx).reason
    assert "/home/rfnet_project/rfnet-master/utils/math_utils.py:distance_matrix_vector" in reason


def test_offline_draft_for_a_hand_built_matmul_mismatch_mentions_both_widths():
    runbook = {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}[
        "matmul-shape-mismatch-linear"
    ]
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message="mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        shape_diff=[ShapeDiff(tensor=None, op="matmul", expected=[None, 512], actual=[4, 256])],
        evidence=[evidence_from_runbook(runbook, 14.2)],  # an unbounded (BM25-like) score
    )
    draft = OfflineProvider().suggest(ctx)
    assert "256 instead of 512" in draft.reason
    assert draft.action.startswith("Set the layer's `in_features`")
    assert 0 < draft.confidence <= 0.9
    assert validate(draft, ctx).ok


def test_offline_provider_is_deterministic():
    ctx = _context(_case("c020"), "conv-channel-mismatch-grayscale-rgba")
    first, second = OfflineProvider().suggest(ctx), OfflineProvider().suggest(ctx)
    assert (first.action, first.reason, first.raw) == (second.action, second.reason, second.raw)


def test_offline_provider_without_evidence_is_a_provider_error():
    with pytest.raises(ProviderError, match="no runbook"):
        OfflineProvider().suggest(AnalysisContext(error_type="E", message="m"))
