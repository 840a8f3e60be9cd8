"""An OpenAI-compatible server that answers from a script, for tests of the LLM path's
premises: the first answer is usually one validation must refuse, the next the corrected one."""

from __future__ import annotations

import json
from typing import Any

from werkzeug import Request, Response

from rca.suggestion.providers import OpenAIProvider
from tests.support.evidence import chat_completion


def scripted_llm(httpserver: Any, *answers: dict) -> tuple[OpenAIProvider, list[dict]]:
    """A provider asking `httpserver`, which answers each chat completion with the next of
    `answers` as JSON (the last one repeats); the list collects every request's body."""
    requests: list[dict] = []

    def handler(request: Request) -> Response:
        requests.append(json.loads(request.data))
        answer = answers[min(len(requests), len(answers)) - 1]
        body = json.dumps(chat_completion(json.dumps(answer)))
        return Response(body, content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handler)
    return OpenAIProvider("sk-test", httpserver.url_for("/v1"), "test-llm", 5, 0), requests
