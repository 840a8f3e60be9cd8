"""Which provider the configuration asks for, decided at call time.

Apart from the providers so that choosing one never needs either's internals, and so that
this package imports without Django configured.
"""

from __future__ import annotations

import os

from rca.suggestion.providers.draft import DEFAULT_MODEL
from rca.suggestion.providers.offline import OfflineProvider
from rca.suggestion.providers.openai_compatible import OpenAIProvider

# --------------------------------------------------------------------------- selection


def _setting(name: str) -> str:
    """A Django setting when Django is configured and defines it, else the environment."""
    try:
        from django.conf import settings

        if settings.configured:
            value = getattr(settings, name, None)
            if isinstance(value, str) and value:
                return value
    except Exception:  # noqa: BLE001, S110 - Django missing or misconfigured: use the env
        pass
    return os.environ.get(name, "")


def provider_from_settings() -> tuple[OpenAIProvider | OfflineProvider, str]:
    """The configured provider and its name: OpenAI-compatible when a key or base URL is set.

    Read at call time, not import time, so a changed environment takes effect on the next
    analysis and this module imports without Django configured.
    """
    api_key = _setting("OPENAI_API_KEY")
    base_url = _setting("OPENAI_BASE_URL")
    if not api_key and not base_url:
        return OfflineProvider(), OfflineProvider.name
    model = _setting("RCA_LLM_MODEL") or DEFAULT_MODEL
    return OpenAIProvider(api_key or None, base_url or None, model), OpenAIProvider.name
