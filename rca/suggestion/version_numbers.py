"""Version numbers as comparable tuples, and the bounded line list the version readers scan.

One place for both because four readers (compatibility tables, release-note tables, library
builds, version pairs) compare versions taken from untrusted incident text: each must read
"2.1.0+cu121", "v1.17.0rc1" or "8.2.4 (Linux)" the same way, in linear time, and never raise.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["bounded_lines", "padded", "parse_version"]

_MAX_PARTS = 6
_MAX_VERSION = 64
_MAX_LINES = 400
_MAX_LINE = 2000


def parse_version(text: str) -> tuple[int, ...]:
    """The leading numeric parts of ``text`` ("8.2.4 (Linux)" -> (8, 2, 4), "12.x" -> (12,),
    "v1.17.0rc1" -> (1, 17, 0)); () when it starts with no number. Linear, never raises."""
    text = text.strip()[:_MAX_VERSION].lstrip("vV")
    parts: list[int] = []
    for piece in text.split(" ")[0].split(".")[:_MAX_PARTS]:
        digits = ""
        for char in piece:
            if not char.isascii() or not char.isdigit():
                break
            digits += char
        if not digits:
            break
        parts.append(int(digits[:9]))
        if len(digits) < len(piece):
            break
    return tuple(parts)


def padded(version: tuple[int, ...]) -> tuple[int, ...]:
    """``version`` with zeros to a fixed length, so (1, 24) and (1, 24, 0) compare equal."""
    return version + (0,) * (_MAX_PARTS - len(version))


def bounded_lines(texts: Sequence[str]) -> list[str]:
    """The lines of ``texts``, each cut to a bounded length and at most a bounded number."""
    lines: list[str] = []
    for text in texts[:_MAX_LINES]:
        lines.extend(line[:_MAX_LINE] for line in text[: _MAX_LINE * 50].splitlines()[:_MAX_LINES])
    return lines[: _MAX_LINES * 4]
