"""The two suggestion providers: any OpenAI-compatible server, and the offline composer.

The OpenAI provider speaks the chat completions protocol through the official client, so
OpenAI, vLLM, Ollama and llama.cpp all work; the client already retries 429/5xx and honours
``Retry-After``/``retry-after-ms``. The offline provider needs no network and no model: it
adapts the top runbook's remediation to the incident's own shapes and frames, so a fresh
install gives useful, validated suggestions and the pipeline always has a fallback.

One idea per module, so each can be read (and changed) on its own: :mod:`.draft` (the
answer and its parsing), :mod:`.openai_compatible`, :mod:`.wording` and :mod:`.step_ranking`
(what the offline composer says, and which runbook step it picks), :mod:`.offline`, and
:mod:`.selection`. Importers use this package; its submodules are an implementation detail.
"""

from __future__ import annotations

from rca.suggestion.providers.draft import (
    DEFAULT_MODEL,
    OFFLINE_MODEL,
    Draft,
    ProviderError,
    parse_answer,
)
from rca.suggestion.providers.offline import OfflineProvider
from rca.suggestion.providers.openai_compatible import OpenAIProvider
from rca.suggestion.providers.selection import provider_from_settings

__all__ = [
    "DEFAULT_MODEL",
    "OFFLINE_MODEL",
    "Draft",
    "OfflineProvider",
    "OpenAIProvider",
    "ProviderError",
    "parse_answer",
    "provider_from_settings",
]
