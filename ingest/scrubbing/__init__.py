"""Remove secrets and personal data from incidents before anything is stored.

Tracebacks and logs routinely carry API keys, bearer tokens and connection strings, and
whatever we store is later sent to an LLM provider and to Slack. Scrubbing runs first, on
every string of the payload, and replaces each finding with ``[redacted:<kind>]`` so the
reader still sees that something was there. Patterns are deliberately specific: tensor
shapes, file paths, line numbers and ML settings such as ``max_tokens=512`` must survive.
"""

from __future__ import annotations

import functools
import re
from typing import Any

MAX_DEPTH = 64

_SENSITIVE_NAMES = (
    r"(?:passw(?:or)?d|secret(?:[_-]?(?:access[_-]?)?key)?|api[_-]?key|apikey|token"
    r"|access[_-]?key|private[_-]?key|authorization)"
)
# ML configs name many harmless things "...token" (pad_token="<pad>", eos_token=2).
_HARMLESS_TOKEN_NAME = re.compile(
    r"(?:^|[_.-])(?:pad|eos|bos|unk|sep|cls|mask|special|start|end|image|audio|video|vision"
    r"|chat|default|first|last|next|input|output|max|min|num|new|decoder_start|stop|boi|eoi)"
    r"[_-]?token$",
    re.IGNORECASE,
)
_KEY_NAME = re.compile(rf"^[\w.-]{{0,60}}?{_SENSITIVE_NAMES}$", re.IGNORECASE)
_KEY_KIND = re.compile(r"passw(?:or)?d|secret|api[_-]?key|apikey|token|key|authorization", re.I)

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY"
            r"( BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        "private_key",
    ),
    (re.compile(r"\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"), "openai_key"),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{22,})\b"), "github_token"),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "slack_token"),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), "huggingface_token"),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "aws_access_key"),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), "google_api_key"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "jwt"),
]
_BEARER = re.compile(r"\b(Bearer|Basic|Token)(\s+)(?!\[redacted)([A-Za-z0-9\-._~+/]{8,}=*)")
_URL_CREDENTIALS = re.compile(r"(?<=://)([^/\s:@]{1,100}):([^/\s@]{1,200})@")
_ASSIGNMENT = re.compile(
    rf"(?P<key>\b[\w.-]{{0,60}}?{_SENSITIVE_NAMES})(?P<quote>[\"']?)(?P<sep>\s*[=:]\s*)"
    r"(?P<value>\"(?:[^\"\\\n]|\\.){0,2000}\"|'[^'\n]{0,2000}'|[^\s,;&'\"}\])]{1,2000})",
    re.IGNORECASE,
)
_EMAIL = re.compile(
    r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b"
)
# Every pattern above needs one of these substrings (case-insensitively a superset), so a
# string without any is returned untouched after one scan instead of twelve: most strings
# of an incident (frames, shapes, log lines) are like that.
_TRIGGER = re.compile(
    r"private|sk-|gh[pousr]_|github_pat_|xox|hf_|akia|asia|aiza|eyj|bearer|basic|token|://"
    r"|passw|secret|api[_-]?key|access[_-]?key|authorization|@",
    re.IGNORECASE,
)


def _kind(key: str) -> str:
    match = _KEY_KIND.search(key)
    if not match:
        return "secret"
    word = match.group(0).lower().replace("-", "_")
    aliases = {"passwd": "password", "apikey": "api_key", "key": "secret"}
    return aliases.get(word, word)


def is_secret_key(key: Any) -> bool:
    """Tell whether a mapping key names a secret (``password``, ``OPENAI_API_KEY``, ...)."""
    if not isinstance(key, str) or len(key) > 100:
        return False
    return _is_secret_name(key)


@functools.lru_cache(maxsize=4096)  # the same few field names arrive in every incident
def _is_secret_name(key: str) -> bool:
    return bool(_KEY_NAME.match(key)) and not _HARMLESS_TOKEN_NAME.search(key)


def _assignment(match: re.Match[str], counter: list[int]) -> str:
    key, value = match.group("key"), match.group("value")
    bare = value.strip("\"'")
    if _HARMLESS_TOKEN_NAME.search(key) or not bare or bare.startswith("[redacted:"):
        return match.group(0)
    if key.lower().endswith("token") and len(bare) < 8:
        return match.group(0)  # "token: 3" is a count, not a credential
    if bare.lower() in {"bearer", "basic", "token"}:
        return match.group(0)  # "Authorization: Bearer <t>": the bearer rule takes the token
    counter[0] += 1
    quote = value[0] if value[0] in "\"'" and value[-1] == value[0] and len(value) > 1 else ""
    redacted = f"{quote}[redacted:{_kind(key)}]{quote}"
    return f"{key}{match.group('quote')}{match.group('sep')}{redacted}"


def scrub_text(text: str, counter: list[int] | None = None) -> str:
    """Redact secrets inside one string; ``counter[0]`` is increased per redaction."""
    counter = counter if counter is not None else [0]
    if not text or not _TRIGGER.search(text):
        return text
    for pattern, kind in _PATTERNS:
        text, count = pattern.subn(f"[redacted:{kind}]", text)
        counter[0] += count
    text, count = _BEARER.subn(r"\1\2[redacted:bearer_token]", text)
    counter[0] += count
    text, count = _URL_CREDENTIALS.subn(r"\1:[redacted:password]@", text)
    counter[0] += count
    text = _ASSIGNMENT.sub(lambda match: _assignment(match, counter), text)
    text, count = _EMAIL.subn("[redacted:email]", text)
    counter[0] += count
    return text


def _scrub(value: Any, counter: list[int], depth: int) -> Any:
    if isinstance(value, str):
        return scrub_text(value, counter)
    if depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
        counter[0] += 1
        return "[redacted:too_deep]"
    if isinstance(value, dict):
        result: dict[Any, Any] = {}
        for key, item in value.items():
            if is_secret_key(key) and item not in (None, "", [], {}):
                counter[0] += 1
                result[key] = f"[redacted:{_kind(key)}]"
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
