"""Remove secrets and personal data from incidents before anything is stored.

Tracebacks and logs routinely carry API keys, bearer tokens and connection strings, and
whatever we store is later sent to an LLM provider and to Slack. Scrubbing runs first, on
every string of the payload, and replaces each finding with ``[redacted:<kind>]`` so the
reader still sees that something was there; the prompt and Slack payload builders pass
their text through :func:`scrub_text` again, as a second line of defence.

Patterns are deliberately specific: tensor shapes, file paths, line numbers and ML
settings such as ``max_tokens=512`` must survive. Names (exception types, frame
``filename``/``function``/``module``) are only checked for unmistakable tokens, never by
the ``KEY=value`` rules, so ``..., PublicKeyToken=7cec85d7bea7798e`` keeps its class name.
Every pattern is RE2 (``ingest.linear_regex``): linear time on any input.
"""

from __future__ import annotations

from typing import Any

from ingest.scrubbing import substitute
from ingest.scrubbing.names import redacts, secret_name
from ingest.scrubbing.patterns import NAME_RULES, PREFILTER, TEXT_RULES, Rule

MAX_DEPTH = 64
_MARKER = "[redacted:"
# Fields that hold a name, not prose: an exception type, a frame's location.
NAME_FIELDS = frozenset(
    {"error_type", "type", "filename", "abs_path", "function", "raw_function", "module"}
)

__all__ = ["is_secret_key", "scrub", "scrub_name", "scrub_text", "scrub_with_count"]


def _apply(text: str, rules: tuple[Rule, ...], counter: list[int]) -> str:
    if not text or PREFILTER.search(text) is None:
        return text
    low = text.lower()  # the triggers of the original text: a superset of what is left
    before = low.count(_MARKER)
    for rule in rules:
        if any(trigger in low for trigger in rule.triggers):
            text = substitute.sub(rule.pattern, rule.replace, text)
    # A rule may hand a match back unchanged (``pad_token=<pad>``): count markers instead.
    counter[0] += max(text.count(_MARKER) - before, 0)
    return text


def scrub_text(text: str, counter: list[int] | None = None) -> str:
    """Redact secrets inside one string; ``counter[0]`` is increased per redaction."""
    return _apply(text, TEXT_RULES, counter if counter is not None else [0])


def scrub_name(text: str, counter: list[int] | None = None) -> str:
    """Redact only unmistakable tokens in a name (type, filename, function, module)."""
    return _apply(text, NAME_RULES, counter if counter is not None else [0])


def is_secret_key(key: Any) -> bool:
    """Tell whether a mapping key names a secret (``password``, ``OPENAI_API_KEY``, ...)."""
    return isinstance(key, str) and secret_name(key) is not None


def _secret_value(key: Any, item: Any) -> str | None:
    """The marker replacing ``item`` when ``key`` names a secret, else None."""
    if not isinstance(key, str) or item in (None, "", [], {}):
        return None
    found = secret_name(key)
    if found is None:
        return None
    if isinstance(item, str) and not redacts(found, item.strip()):
        return None
    if not isinstance(item, str) and not found.strong and isinstance(item, (int, float, bool)):
        return None  # "token": 3 counts tokens
    return f"{_MARKER}{found.kind}]"


def _scrub(value: Any, counter: list[int], depth: int) -> Any:
    if isinstance(value, str):
        return scrub_text(value, counter)
    if depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
        counter[0] += 1
        return f"{_MARKER}too_deep]"
    if isinstance(value, dict):
        result: dict[Any, Any] = {}
        for key, item in value.items():
            marker = _secret_value(key, item)
            if marker is not None:
                counter[0] += 1
                result[key] = marker
            elif key in NAME_FIELDS and isinstance(item, str):
                result[key] = scrub_name(item, counter)
            else:
                result[key] = _scrub(item, counter, depth + 1)
        return result
    if isinstance(value, (list, tuple)):
        return [_scrub(item, counter, depth + 1) for item in value]
    return value


def scrub_with_count(value: Any) -> tuple[Any, int]:
    """Scrub strings, dicts and lists recursively; return the copy and how many redactions."""
    counter = [0]
    return _scrub(value, counter, 0), counter[0]


def scrub(value: Any) -> Any:
    """Return a copy of ``value`` with every secret we recognise replaced by a marker."""
    return scrub_with_count(value)[0]
