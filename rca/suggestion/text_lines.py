"""The lines of an incident's texts, bounded, for the fact readers.

Fact readers scan untrusted incident text line by line; this cuts the work to a fixed
number of lines of a fixed length before any pattern sees them, so an attacker's
megabyte-long message costs no more than a long legitimate one. One function, so the
readers agree on what "the lines" are.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_LINES = 800
MAX_LINE = 2000


def first_lines(texts: Iterable[object], max_lines: int = MAX_LINES) -> list[str]:
    """At most ``max_lines`` lines of the strings in ``texts`` (others skipped), in order,
    each cut to :data:`MAX_LINE` characters."""
    lines: list[str] = []
    for text in texts:
        if not isinstance(text, str):
            continue
        lines.extend(line[:MAX_LINE] for line in text.splitlines()[:max_lines])
        if len(lines) >= max_lines:
            break
    return lines[:max_lines]
