"""The process-wide sender: configured from the environment, or by `init()` in code."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from rootcause_client.config import Config, from_env
from rootcause_client.transport import Transport

_lock = threading.Lock()
_transport: Transport | None = None


def init(url: str | None = None, api_key: str | None = None, **options: Any) -> Transport:
    """(Re)configure where incidents go; arguments left out come from RCA_URL/RCA_API_KEY."""
    global _transport
    env = from_env()
    config = Config(
        url=(url if url is not None else env.url).rstrip("/"),
        api_key=api_key if api_key is not None else env.api_key,
        **{"queue_size": env.queue_size, "timeout": env.timeout, **options},
    )
    with _lock:
        if _transport is not None:
            _transport.close(timeout=0)
        _transport = Transport(config)
    return _transport


def current_transport() -> Transport:
    """The configured sender, made from the environment on first use."""
    global _transport
    if _transport is None:
        with _lock:
            if _transport is None:
                _transport = Transport(from_env())
    return _transport


def default_service() -> str:
    """RCA_SERVICE, else OpenTelemetry's OTEL_SERVICE_NAME, else the program's name."""
    name = os.environ.get("RCA_SERVICE") or os.environ.get("OTEL_SERVICE_NAME")
    return name or os.path.basename(sys.argv[0] or "") or "python"


def report(incident: dict[str, Any]) -> bool:
    """Queue an incident (the JSON API's schema) for sending; False when dropped."""
    return current_transport().submit(incident)


def flush(timeout: float = 5.0) -> bool:
    """Wait until what was queued has been sent (or given up); True when the queue is empty."""
    return current_transport().flush(timeout)
