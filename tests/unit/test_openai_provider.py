"""The OpenAI-compatible provider against a local chat-completions server: answers found in
the reply, retries, JSON mode fallback and the errors it raises."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from rca.suggestion.providers import (
    OpenAIProvider,
    ProviderError,
    parse_answer,
)

MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "signals"}]
ANSWER = {
    "action": "Set in_features of the first Linear layer to 256.",
    "reason": "The flattened input has 256 features while the layer expects 512.",
    "runbook": "matmul-shape-mismatch-linear",
    "confidence": 0.8,
}


def _completion(content: str, usage: dict[str, int] | None = None) -> dict[str, Any]:
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

    def __init__(self, httpserver: HTTPServer, responses: Iterable[Any]) -> None:
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []
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

    def provider(self, **kwargs: Any) -> OpenAIProvider:
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
def test_answer_is_found_in_bare_json_fences_or_prose(text: str) -> None:
    assert parse_answer(text)["action"] == ANSWER["action"]


@pytest.mark.parametrize("text", ["", "I think you should restart it.", "{not json}", "[1, 2]"])
def test_text_without_an_answer_object_is_a_provider_error(text: str) -> None:
    with pytest.raises(ProviderError, match="action|empty"):
        parse_answer(text)


# --------------------------------------------------------------------------- OpenAI provider


def test_good_json_answer_becomes_a_draft_with_usage_and_latency(httpserver: HTTPServer) -> None:
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


def test_nul_characters_in_the_model_output_never_reach_the_draft(httpserver: HTTPServer) -> None:
    """PostgreSQL would refuse to store the suggestion; they become U+FFFD instead."""
    answer = {**ANSWER, "action": "Set in_features\u0000 to 256."}
    content = json.dumps(answer) + "\u0000"  # escaped in the JSON, and a raw one after it
    server = ChatServer(httpserver, [_ok(content)])
    draft = server.provider().suggest(MESSAGES)
    assert "\x00" not in draft.action + draft.reason + draft.raw
    assert draft.action == "Set in_features\ufffd to 256."


def test_answer_in_a_json_fence_with_prose_is_parsed(httpserver: HTTPServer) -> None:
    text = f"Looking at the frames...\n```json\n{json.dumps(ANSWER)}\n```\nGood luck."
    server = ChatServer(httpserver, [_ok(text)])
    draft = server.provider().suggest(MESSAGES)
    assert draft.runbook == "matmul-shape-mismatch-linear"
    assert draft.raw == text


def test_rate_limit_is_retried_after_the_delay_the_server_asks_for(httpserver: HTTPServer) -> None:
    server = ChatServer(
        httpserver, [_error(429, "rate limited", **{"Retry-After": "0.3"}), _ok(json.dumps(ANSWER))]
    )
    draft = server.provider().suggest(MESSAGES)
    assert draft.action == ANSWER["action"]
    assert len(server.requests) == 2
    assert server.times[1] - server.times[0] >= 0.29


def test_server_errors_are_retried_until_success(httpserver: HTTPServer) -> None:
    fail = _error(500, **{"retry-after-ms": "10"})
    server = ChatServer(httpserver, [fail, fail, _ok(json.dumps(ANSWER))])
    draft = server.provider(max_retries=2).suggest(MESSAGES)
    assert draft.runbook == ANSWER["runbook"]
    assert len(server.requests) == 3


def test_persistent_server_error_is_a_provider_error_after_the_retries(
    httpserver: HTTPServer,
) -> None:
    server = ChatServer(httpserver, [_error(500, "overloaded", **{"retry-after-ms": "10"})])
    with pytest.raises(ProviderError, match="HTTP 500") as excinfo:
        server.provider(max_retries=2).suggest(MESSAGES)
    assert excinfo.value.status == 500
    assert len(server.requests) == 3


def test_server_rejecting_response_format_is_asked_again_without_it(httpserver: HTTPServer) -> None:
    def strict(body: dict[str, Any]) -> Response:
        if "response_format" in body:
            return _error(400, "Unrecognized request argument supplied: response_format")
        return _ok(f"```json\n{json.dumps(ANSWER)}\n```")

    server = ChatServer(httpserver, [strict])
    provider = server.provider()
    assert provider.suggest(MESSAGES).action == ANSWER["action"]
    assert ["response_format" in body for body in server.requests] == [True, False]
    provider.suggest(MESSAGES)  # remembered: no second rejected attempt
    assert ["response_format" in body for body in server.requests] == [True, False, False]


def test_other_bad_requests_are_not_retried_without_json_mode(httpserver: HTTPServer) -> None:
    server = ChatServer(httpserver, [_error(400, "messages too long")])
    with pytest.raises(ProviderError, match="HTTP 400"):
        server.provider().suggest(MESSAGES)
    assert len(server.requests) == 1


def test_garbage_answer_is_a_provider_error_keeping_the_raw_text(httpserver: HTTPServer) -> None:
    server = ChatServer(httpserver, [_ok("I am not sure what went wrong, sorry.")])
    with pytest.raises(ProviderError, match="no JSON object") as excinfo:
        server.provider().suggest(MESSAGES)
    assert excinfo.value.raw == "I am not sure what went wrong, sorry."


def test_answer_missing_the_reason_is_a_provider_error(httpserver: HTTPServer) -> None:
    server = ChatServer(httpserver, [_ok(json.dumps({"action": "Set x.", "runbook": "r"}))])
    with pytest.raises(ProviderError, match="reason"):
        server.provider().suggest(MESSAGES)


def test_slow_server_times_out_as_a_provider_error(httpserver: HTTPServer) -> None:
    def slow(body: dict[str, Any]) -> Response:
        time.sleep(0.5)
        return _ok(json.dumps(ANSWER))

    server = ChatServer(httpserver, [slow])
    with pytest.raises(ProviderError, match="timed out"):
        server.provider(timeout=0.1, max_retries=0).suggest(MESSAGES)
