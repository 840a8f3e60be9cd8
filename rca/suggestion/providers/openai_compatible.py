"""The provider for OpenAI and any server that speaks its chat completions protocol.

Kept apart from the offline composer so that only this module knows the ``openai`` client
(imported lazily: only the worker that calls an LLM pays for it). Not named ``openai.py``,
which would read as the client library itself.
"""

from __future__ import annotations

import json
import time
from typing import Any, cast

from ingest.storable import storable_text
from rca.suggestion.providers.draft import Draft, ProviderError, draft_from_answer, parse_answer

# --------------------------------------------------------------------------- OpenAI


class OpenAIProvider:
    """Chat completions against OpenAI or any compatible server (vLLM, Ollama, llama.cpp).

    JSON mode is asked for first; servers that reject ``response_format`` are asked again
    without it (once, then remembered) and the answer is parsed tolerantly.
    """

    name = "openai"

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        model: str,
        timeout: float = 30,
        max_retries: int = 2,
    ) -> None:
        import openai  # heavy; only the worker that calls an LLM pays for it

        self.model = model
        self._json_mode = True
        self._client = openai.OpenAI(
            # Local servers need no key, but the client refuses to start without one.
            api_key=api_key or "not-needed",
            base_url=base_url or None,
            timeout=timeout,
            max_retries=max_retries,
        )

    def suggest(self, messages: list[dict[str, str]]) -> Draft:
        """Ask for one suggestion; raises :class:`ProviderError` when no usable answer came."""
        import openai

        started = time.monotonic()
        try:
            try:
                response = self._complete(messages, json_mode=self._json_mode)
            except openai.BadRequestError as exc:
                if not self._json_mode or "response_format" not in _error_text(exc):
                    raise
                self._json_mode = False
                response = self._complete(messages, json_mode=False)
        except openai.APITimeoutError as exc:
            raise ProviderError(f"{self.model}: the request timed out") from exc
        except openai.APIStatusError as exc:
            raise ProviderError(
                f"{self.model}: HTTP {exc.status_code}: {_error_text(exc)[:200]}",
                status=exc.status_code,
            ) from exc
        except openai.APIError as exc:  # connection refused, bad response body, ...
            raise ProviderError(f"{self.model}: {exc}") from exc
        latency_ms = int((time.monotonic() - started) * 1000)

        usage = _usage(response)
        choices = getattr(response, "choices", None) or []
        # Model output is untrusted text like incident content: PostgreSQL stores no NULs.
        raw = storable_text((choices[0].message.content or "") if choices else "")
        answer = parse_answer(raw)
        return draft_from_answer(
            answer,
            provider=self.name,
            model=getattr(response, "model", None) or self.model,
            raw=raw,
            usage=usage,
            latency_ms=latency_ms,
        )

    def _complete(self, messages: list[dict[str, str]], *, json_mode: bool) -> Any:
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}
        return self._client.chat.completions.create(
            model=self.model, messages=cast(Any, messages), temperature=0, **extra
        )


def _error_text(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    return f"{exc} {json.dumps(body, default=str) if body is not None else ''}"


def _usage(response: Any) -> dict[str, int]:
    usage = getattr(response, "usage", None)
    if usage is None:
        return {}
    return {
        key: int(getattr(usage, key))
        for key in ("prompt_tokens", "completion_tokens", "total_tokens")
        if isinstance(getattr(usage, key, None), int)
    }
