"""Evidence from the bundled runbooks, ranked as retrieval would hand it to a provider.

Shared by the offline provider's tests, which build contexts by hand to say which
runbooks were found and how high each ranked.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from ingest.parsing.shapes import extract_shape_diff
from rca.corpus.files import Runbook, bundled_runbook_dir, load_directory
from rca.suggestion.context import AnalysisContext, Evidence, evidence_from_runbook
from rca.suggestion.providers import Draft


def bundled_runbooks() -> dict[str, Runbook]:
    """The bundled runbooks by slug (a new dict each call; the runbooks are immutable)."""
    return {rb.slug: rb for rb in _bundled()}


@functools.cache
def _bundled() -> tuple[Runbook, ...]:
    """Read once a test process: the parametrised tests ask for them per test and per case
    (hundreds of times a run), and the files do not change during one."""
    return tuple(load_directory(bundled_runbook_dir()))


def evidence(*ranked: tuple[str, float]) -> list[Evidence]:
    """Evidence for each (slug, score) pair, in the order given."""
    runbooks = bundled_runbooks()
    return [evidence_from_runbook(runbooks[slug], score) for slug, score in ranked]


def message_context(
    message: str, *ranked: tuple[str, float], logs: tuple[str, ...] = ()
) -> AnalysisContext:
    """A context holding only an error message (its shapes read from it), log lines and the
    ranked runbooks: what the fact and premise tests vary."""
    return AnalysisContext(
        error_type="",
        message=message,
        shape_diff=extract_shape_diff(message),
        logs=[{"message": line} for line in logs],
        evidence=evidence(*ranked),
    )


def draft(action: str, runbook: str, reason: str = "Because.") -> Draft:
    """A provider's answer with this action citing this runbook, for validation tests."""
    return Draft(action, reason, runbook, 0.5, "test", "test")


def incident_context(
    message: str,
    *ranked: tuple[str, float],
    logs: Iterable[str] = (),
    frames: Iterable[dict[str, Any]] = (),
) -> AnalysisContext:
    """A context of a message (its error type read from a ``Type: text`` head), log lines,
    frames and the ranked runbooks: what the version and component tests vary."""
    return AnalysisContext(
        error_type=message.split(":", 1)[0] if ":" in message[:40] else "",
        message=message,
        logs=[{"message": line} for line in logs],
        frames=list(frames),
        evidence=evidence(*ranked),
    )


def chat_completion(content: str) -> dict[str, Any]:
    """An OpenAI chat-completions response body whose one choice says ``content``: what the
    local OpenAI-protocol servers of the LLM-path tests answer."""
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "test-llm",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 500, "completion_tokens": 40, "total_tokens": 540},
    }
