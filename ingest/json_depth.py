"""Refuse JSON nested deeper than ``MAX_DEPTH`` from its bytes, before anything parses it.

Deep nesting is never data a service means to send: it is how a payload makes a
recursive walk (ours, pydantic's, the template's) raise ``RecursionError``. The check
runs in up to three passes over the raw bytes. A body with no more openers (``[``, ``{``)
than ``MAX_DEPTH`` cannot nest deeper, whatever its strings hold: two counts, and most
bodies stop there. The next pass is C-speed regular expressions: strings are cut out,
only brackets kept, and innermost pairs are removed ``MAX_DEPTH`` times; if any bracket
is left, the slow one walks the tokens once (strings, brackets, ``:`` and ``,``) to name
the path of the first container that is too deep, for the 400 answer. All are linear in
the body; the slow one runs only for a body that will be refused.
"""

from __future__ import annotations

import re

MAX_DEPTH = 32

# A string, closed or (in broken JSON) running to the end: possessive, so never quadratic.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.?)*+(?:"|\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SQUARE = bytes.maketrans(b"{}", b"[]")  # depth does not care which kind
_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.?)*+(?:"|\Z)|[\[\]{}:,]', re.DOTALL)
_KEY_SHOWN = 64  # characters of a key kept in the path


class TooDeep(ValueError):
    """JSON nested deeper than allowed; ``loc`` is the path to the first too-deep value."""

    def __init__(self, loc: list[str | int], max_depth: int) -> None:
        super().__init__(
            f"JSON is nested more than {max_depth} levels deep here; flatten it "
            f"(at most {max_depth} levels of objects and arrays)"
        )
        self.loc = loc


def _maybe_too_deep(raw: bytes, max_depth: int) -> bool:
    """False when no container can sit deeper than ``max_depth`` (C-speed, no parsing).

    Each round removes the innermost ``[]`` pairs only (``bytes.replace`` never rescans),
    so ``rounds`` rounds remove every container of height ``rounds``; openers left
    unmatched (broken JSON) may each add a level above them.
    """
    brackets = _STRING.sub(b"", raw).translate(_SQUARE, _NOT_BRACKETS)
    rounds = 0
    while rounds < max_depth and b"[]" in brackets:
        brackets = brackets.replace(b"[]", b"")
        rounds += 1
    return rounds + brackets.count(b"[") > max_depth


def _key(token: bytes) -> str:
    import json

    try:
        key = json.loads(token)
    except ValueError:
        key = token.decode("utf-8", "replace").strip('"')
    return key[:_KEY_SHOWN] if isinstance(key, str) else str(key)


def _path_of_too_deep(raw: bytes, max_depth: int) -> list[str | int] | None:
    """The path to the first container opened at depth ``max_depth + 1``."""
    path: list[str | int] = []  # one entry per open container: its current key or index
    kinds: list[bytes] = []
    pending_key: str | None = None
    for match in _TOKEN.finditer(raw):
        token = match.group()
        first = token[:1]
        if first in (b"[", b"{"):
            if len(kinds) >= max_depth:
                return path
            kinds.append(first)
            path.append(0 if first == b"[" else "")
        elif first in (b"]", b"}"):
            if kinds:
                kinds.pop()
                path.pop()
        elif first == b",":
            if kinds and kinds[-1] == b"[" and isinstance(path[-1], int):
                path[-1] += 1
        elif first == b":":
            if kinds and kinds[-1] == b"{" and pending_key is not None:
                path[-1] = pending_key
        else:  # a string: it is a key when the container is an object and ':' follows
            pending_key = _key(token) if kinds and kinds[-1] == b"{" else None
    return None


def check_depth(raw: bytes | str, loc: list[str | int], max_depth: int = MAX_DEPTH) -> None:
    """Raise ``TooDeep`` (with ``loc`` + the path inside ``raw``) if ``raw`` nests too deep."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return  # no container can sit deeper than there are openers (most bodies: ~1 us)
    if not _maybe_too_deep(data, max_depth):
        return
    inner = _path_of_too_deep(data, max_depth)
    if inner is not None:
        raise TooDeep([*loc, *inner], max_depth)
