"""A sentry-sdk integration: Sentry events carry the failing module and shape diff too.

`watch` and the Keras callback leave what they recorded on the exception; this event
processor copies it into the event's `rootcause` context (and a `module` tag), which
Rootcause's Sentry endpoint reads into the incident's shape diff. A service that reports
only through Sentry uses `watch(model, send=False)`.
"""

from __future__ import annotations

from typing import Any

from sentry_sdk.integrations import Integration
from sentry_sdk.scope import add_global_event_processor

from rootcause_client.watch import CONTEXT_ATTR


class RootcauseIntegration(Integration):
    """`sentry_sdk.init(dsn, integrations=[RootcauseIntegration()])`."""

    identifier = "rootcause"

    @staticmethod
    def setup_once() -> None:
        add_global_event_processor(attach_context)


def attach_context(event: dict[str, Any], hint: dict[str, Any] | None) -> dict[str, Any]:
    """The event, with the recorded context of the exception it reports (if any)."""
    exc_info = (hint or {}).get("exc_info") or (None, None, None)
    recorded = getattr(exc_info[1], CONTEXT_ATTR, None)
    if isinstance(recorded, dict) and recorded:
        event.setdefault("contexts", {})["rootcause"] = recorded
        if recorded.get("module"):
            event.setdefault("tags", {})["module"] = str(recorded["module"])[:200]
    return event
