"""The LLM as tests run it: a worker on the `llm` queue whose OpenAI-compatible server is
pytest-httpserver on loopback, each test scripting its answers (failures included)."""

from __future__ import annotations

from pathlib import Path

from tests.support.processes import Worker

MODEL = "test-llm"


def chat_completion(content: str) -> dict:
    """A `/v1/chat/completions` answer whose message is `content` (900 prompt tokens)."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960},
    }


def start_llm_worker(
    db: dict, broker_url: str, base_url: str, log_dir: Path, extra_env: dict[str, str] | None = None
) -> Worker:
    """A worker (started, not yet ready) that takes the `llm` queue and asks `base_url`."""
    env = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test", "RCA_LLM_MODEL": MODEL}
    return Worker(db, broker_url, log_dir, queues="llm", extra_env={**env, **(extra_env or {})})
