"""Decide which incidents are the same issue: fingerprint, title and culprit.

The same bug must land in one issue whatever the batch size, GPU, dtype or checkout path
of the run that hit it, while two different errors at the same call site (an OOM and a
shape mismatch both raised from ``model(x)``) must not. So the fingerprint combines the
error type, the user's own frames (no line numbers, no directories) and the message with
its run-specific values stripped out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from ingest.linear_regex import LinearMatch, LinearPattern
from ingest.linear_regex import compile as linear
from ingest.parsing.frames import Frame

MAX_TITLE = 200
_TYPE_PREFIX = linear(r"^\s*[\w.]*(?:Error|Exception|Warning|Interrupt|Exit)\s*:\s*")
_DEFAULT_MARKERS = {"{{ default }}", "{{default}}"}

# Order matters: specific forms are replaced before the digits inside them are.
# RE2 has no lookaround, so the two rules that needed it are spelt differently:
# a path keeps the character before it (group ``pre``) instead of a lookbehind, and a hex
# id is any hex run whose replacement is decided by ``_hex_id`` instead of lookaheads.
_Replacement = str | Callable[[LinearMatch], str]


def _hex_id(match: LinearMatch) -> str:
    """Hex runs that mix digits and letters are ids (commit hashes, object ids)."""
    run = str(match[0])
    mixed = any(c.isdigit() for c in run) and any(not c.isdigit() for c in run)
    return "<id>" if mixed else run


# Each rule may name literals one of which every match of its pattern contains
# (``needles``; ``folded``: tested in the lowercased text, for a case-insensitive pattern
# whose words hold no letter RE2 folds from outside ASCII, i.e. no k or s). A message
# without any of them cannot match, so the RE2 call is skipped: a substring test costs
# ~50 ns, a pass ~1.3 us, and most messages hold few of these forms. Rules without
# needles always run. tests/unit/test_grouping.py checks the result against every pass.
_NORMALISERS: list[tuple[LinearPattern, _Replacement, tuple[str, ...], bool]] = [
    (
        linear(r"(?:torch\.)?Size\(\[[^\]]*\]\)|TensorShape\(\[[^\]]*\]\)"),
        "<shape>",
        ("Size([", "TensorShape(["),
        False,
    ),
    (
        linear(
            r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", ignore_case=True
        ),
        "<uuid>",
        ("-",),
        False,
    ),
    (linear(r"\b0x[0-9a-f]+\b", ignore_case=True), "<hex>", ("0x", "0X"), False),
    (linear(r"\b\d+(?:\.\d+)?\s*(?:[KMGTP]i?B|bytes|B)\b"), "<mem>", ("B", "bytes"), False),
    (linear(r"\b(cuda|gpu|xpu|npu|hpu|mps|rank):\s?\d+\b", ignore_case=True), r"\1", (":",), False),
    (linear(r"[A-Za-z]:\\[^\s'\"(),]+"), "<path>", (":\\",), False),
    (
        linear(r"(?P<pre>^|[^\w:/.])(?:~|\.{1,2})?(?:/[\w.@+\-]+){2,}/?"),
        r"\g<pre><path>",
        ("/",),
        False,
    ),
    (linear(r"\(\s*\d+(?:\s*x\s*\d+)+\s*\)|\b\d+(?:x\d+)+\b"), "<shape>", ("x",), False),
    (linear(r"\[\s*(?:-?\d+|None)?(?:\s*,\s*(?:-?\d+|None))*\s*,?\s*\]"), "<shape>", ("[",), False),
    (linear(r"\(\s*(?:-?\d+|None)\s*,(?:\s*(?:-?\d+|None)\s*,?)*\s*\)"), "<shape>", (",",), False),
    (
        linear(
            r"\b(?:torch\.|np\.|numpy\.|tf\.|jnp\.)?(?:b?float(?:8\w*|16|32|64)|bf16"
            r"|fp(?:4|8|16|32)|u?int(?:4|8|16|32|64)|complex(?:64|128)|half|double)\b",
            ignore_case=True,
        ),
        "<dtype>",
        ("float", "bf16", "fp", "int", "complex", "half", "double"),
        True,
    ),
    (linear(r"\b[0-9a-f]{6,}\b", ignore_case=True), _hex_id, (), False),
    (linear(r"\d+(?:\.\d+)*"), "<n>", (), False),
]
# Last, runs of spaces become one space. In ASCII text the pattern's class is tab, line
# feed, form feed, carriage return, space and \x1c-\x1f; without any but single spaces,
# every run is already " " and the pass (~6 us: one engine call per space) changes nothing.
_SPACES = linear(r"\s+")
_OTHER_SPACES = ("  ", "\t", "\n", "\r", "\f", "\x1c", "\x1d", "\x1e", "\x1f")


def _collapse_spaces(text: str) -> str:
    if text.isascii() and not any(space in text for space in _OTHER_SPACES):
        return text
    return _SPACES.sub(" ", text)


def normalise_message(message: str) -> str:
    """Strip what varies between runs of one bug: numbers, ids, paths, shapes, dtypes, devices."""
    if not isinstance(message, str):
        return ""
    text = message[:2000]
    for pattern, replacement, needles, folded in _NORMALISERS:
        if needles:
            seen = text.lower() if folded else text
            if not any(needle in seen for needle in needles):
                continue
        text = pattern.sub(replacement, text)
    return _collapse_spaces(text).strip()[:500]


def _short_type(error_type: Any) -> str:
    """``torch.OutOfMemoryError`` and ``torch.cuda.OutOfMemoryError`` are one class."""
    if not isinstance(error_type, str):
        return ""
    return error_type.strip().rsplit(".", 1)[-1][:200]


def _basename(filename: str) -> str:
    return filename.replace("\\", "/").rsplit("/", 1)[-1]


def _frame_key(frame: Any) -> str:
    if not isinstance(frame, dict):
        return ""
    module = str(frame.get("module") or "")
    filename = str(frame.get("filename") or "")
    function = str(frame.get("function") or "")
    where = module or _basename(filename)
    return f"{where}:{function}" if (where or function) else ""


def _in_app_keys(frames: Any) -> list[str]:
    keys: list[str] = []
    if not isinstance(frames, (list, tuple)):
        return keys
    for frame in frames:
        if not isinstance(frame, dict) or not frame.get("in_app"):
            continue
        key = _frame_key(frame)
        if key and (not keys or keys[-1] != key):  # recursion depth is not part of the bug
            keys.append(key)
    return keys


def _first_line(message: Any) -> str:
    if not isinstance(message, str):
        return ""
    for line in message.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _default_parts(error_type: str, frames: list[Frame], message: str) -> list[str]:
    short_type = _short_type(error_type)
    # Some clients repeat the type in the message ("RuntimeError: ..."), some do not.
    message_line = _TYPE_PREFIX.sub("", _first_line(message), count=1)
    parts = ["type", short_type, "message", normalise_message(message_line)]
    keys = _in_app_keys(frames)
    if keys:
        parts += ["frames", *keys]
    return parts


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()


def fingerprint(
    error_type: str,
    frames: list[Frame],
    message: str,
    explicit: list[str] | str | None = None,
) -> str:
    """Return the sha256 hex digest that names the issue this incident belongs to.

    An explicit fingerprint from the client wins; ``{{ default }}`` inside it stands for
    the computed one (Sentry's convention), so clients can split a group further.
    """
    explicit_parts: list[str] = []
    if isinstance(explicit, str):
        explicit_parts = [explicit]
    elif isinstance(explicit, (list, tuple)):
        explicit_parts = [str(part) for part in explicit if part is not None]
    explicit_parts = [part[:500] for part in explicit_parts if part.strip()]
    default = _default_parts(error_type, frames, message)
    if not explicit_parts:
        return _digest(default)
    parts = ["explicit"]
    for part in explicit_parts:
        parts += default if part.strip() in _DEFAULT_MARKERS else [part]
    return _digest(parts)


def issue_title(error_type: str, message: str) -> str:
    """A one-line title: ``Type: first line of the message``, at most 200 characters."""
    error_type = error_type.strip() if isinstance(error_type, str) else ""
    line = " ".join(_first_line(message).split())
    if error_type and line.startswith(f"{error_type}:"):
        line = line[len(error_type) + 1 :].strip()
    if error_type and line:
        title = f"{error_type}: {line}"
    else:
        title = error_type or line or "Unknown error"
    title = " ".join(title.split())
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1].rstrip() + "…"


def culprit(frames: list[Frame]) -> str:
    """Name where it broke: the innermost in-app frame, else the innermost frame.

    ``module.function`` when the module is known (JVM, installed Python packages),
    ``file.py:function`` otherwise.
    """
    if not isinstance(frames, (list, tuple)):
        return ""
    usable = [frame for frame in frames if isinstance(frame, dict)]
    in_app = [frame for frame in usable if frame.get("in_app")]
    candidates = in_app or usable
    if not candidates:
        return ""
    frame = candidates[-1]
    module = str(frame.get("module") or "")
    function = str(frame.get("function") or "")
    if module:
        return f"{module}.{function}"[:MAX_TITLE] if function else module[:MAX_TITLE]
    filename = _basename(str(frame.get("filename") or ""))
    return (f"{filename}:{function}" if function else filename)[:MAX_TITLE]
