"""Which provider the settings select: offline unless a key or base URL names a server."""

from __future__ import annotations

import pytest

from rca.suggestion.providers import (
    OfflineProvider,
    OpenAIProvider,
    provider_from_settings,
)

_LLM_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RCA_LLM_MODEL")


def test_offline_provider_is_the_default_without_key_or_base_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in _LLM_VARS:
        monkeypatch.delenv(name, raising=False)
    provider, name = provider_from_settings()
    assert name == "offline"
    assert isinstance(provider, OfflineProvider)


def test_base_url_alone_selects_an_openai_compatible_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in _LLM_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("RCA_LLM_MODEL", "llama3.1:8b")
    provider, name = provider_from_settings()
    assert name == "openai"
    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "llama3.1:8b"
