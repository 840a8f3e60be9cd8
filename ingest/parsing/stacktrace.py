"""One entry point for whatever a client sent as ``stacktrace``: frame objects or raw text.

Ingest must accept every incident, so this never raises: text it cannot read becomes an
empty list and the incident is still stored, grouped by its message instead.
"""

from __future__ import annotations

from typing import Any

from ingest.linear_regex import compile as linear
from ingest.parsing.frames import ParsedException, frames_from_json
from ingest.parsing.java_stacktrace import parse_java_stacktrace
from ingest.parsing.python_traceback import parse_python_traceback

MAX_TEXT = 200_000

_JAVA_FRAME = linear(r"^\s*at\s+[\w$./<>@-]+\([^()]*\)", multiline=True)
_PYTHON_FRAME = linear(r'^\s*File "[^"]*", line \d+', multiline=True)


def looks_like_java(text: str) -> bool:
    """Decide by counting the frames each language would print; Python wins ties."""
    java = len(_JAVA_FRAME.findall(text))
    return java > 0 and java > len(_PYTHON_FRAME.findall(text))


def parse_stacktrace(value: str | list[Any] | None) -> list[ParsedException]:
    """Parse a stack trace given as text (Python or JVM) or as a list of frame objects.

    A list of frames carries no exception type or message (those come with the incident),
    so it yields a single exception with an empty type and message.
    """
    try:
        if isinstance(value, (list, tuple)):
            frames = frames_from_json(list(value))
            if not frames:
                return []
            return [ParsedException(type="", message="", frames=frames, relation=None)]
        if not isinstance(value, str) or not value.strip():
            return []
        text = value[:MAX_TEXT]
        if looks_like_java(text):
            return parse_java_stacktrace(text)
        return parse_python_traceback(text)
    except Exception:  # noqa: BLE001 - a parser bug must never cost us the incident
        return []
