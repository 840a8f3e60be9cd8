"""The one place that compiles regular expressions which run over attacker-written text.

Incident messages, stack traces, logs, runbook signals and LLM output are written by
whoever can reach the API, so a backtracking engine (Python's ``re``) lets one crafted
message hold a worker for seconds per extra character. Every such pattern is compiled
here with RE2 (the ``google-re2`` bindings), whose automaton runs in time linear in the
input whatever the pattern. RE2 has no lookaround and no backreferences: a pattern that
needs them is rewritten (or the work is done in plain Python over a capped input), and
``compile`` raises :class:`UnsupportedPattern` instead of silently falling back to
``re`` -- there is no fallback policy, by design.

Semantics differ from ``re`` in a few documented ways that callers rely on knowingly:

- ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII-only (``re`` uses Unicode classes).
  Incident text is overwhelmingly ASCII; a non-ASCII digit is simply not a number here.
- ``$`` without ``multiline`` matches only at the very end (``re`` also matches before
  a final newline); ``\\Z`` is spelt ``\\z``.
- Flags are keyword arguments; ``re.VERBOSE`` does not exist.

Memory is bounded too: each pattern's automaton may use at most :data:`MAX_MEM` bytes;
when its DFA cache fills RE2 falls back to its (still linear) NFA rather than failing.
Lone surrogates (JSON allows ``"\\ud800"``) cannot be encoded to UTF-8 for RE2, so they
are matched as ``?``; the text keeps its length, so match offsets stay valid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

import re2  # type: ignore[import-untyped]

MAX_MEM = 8 << 20
"""Bytes of automaton memory per pattern (RE2's default); 8 MiB keeps ~100 patterns < 1 GiB."""


class UnsupportedPattern(ValueError):
    """The pattern uses syntax RE2 cannot run in linear time (lookaround, backreferences)."""


class LinearMatch(Protocol):
    """The subset of ``re.Match`` that RE2 matches provide."""

    def group(self, *groups: int | str) -> str | None | tuple[str | None, ...]: ...
    def groups(self, default: str | None = None) -> tuple[str | None, ...]: ...
    def groupdict(self, default: str | None = None) -> dict[str, str | None]: ...
    def start(self, group: int = 0) -> int: ...
    def end(self, group: int = 0) -> int: ...
    def span(self, group: int = 0) -> tuple[int, int]: ...
    def __getitem__(self, group: int | str) -> str | None: ...


def _safe(text: str) -> str:
    """Replace lone surrogates (unencodable as UTF-8) by ``?``, keeping the length."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


class LinearPattern:
    """A compiled RE2 pattern with the ``re.Pattern`` methods our code uses."""

    __slots__ = ("_regexp", "pattern")

    def __init__(self, regexp: object, pattern: str) -> None:
        self._regexp = regexp
        self.pattern = pattern

    @property
    def groups(self) -> int:
        return int(self._regexp.groups)  # type: ignore[attr-defined]

    @property
    def groupindex(self) -> dict[str, int]:
        return dict(self._regexp.groupindex)  # type: ignore[attr-defined]

    def search(self, text: str, pos: int | None = None) -> LinearMatch | None:
        return self._regexp.search(_safe(text), pos)  # type: ignore[attr-defined,no-any-return]

    def match(self, text: str, pos: int | None = None) -> LinearMatch | None:
        return self._regexp.match(_safe(text), pos)  # type: ignore[attr-defined,no-any-return]

    def fullmatch(self, text: str) -> LinearMatch | None:
        return self._regexp.fullmatch(_safe(text))  # type: ignore[attr-defined,no-any-return]

    def finditer(self, text: str) -> Iterator[LinearMatch]:
        return self._regexp.finditer(_safe(text))  # type: ignore[attr-defined,no-any-return]

    def findall(self, text: str) -> list[str] | list[tuple[str, ...]]:
        return self._regexp.findall(_safe(text))  # type: ignore[attr-defined,no-any-return]

    def split(self, text: str, maxsplit: int = 0) -> list[str]:
        return self._regexp.split(_safe(text), maxsplit)  # type: ignore[attr-defined,no-any-return]

    def sub(self, repl: str | Callable[[LinearMatch], str], text: str, count: int = 0) -> str:
        return self._regexp.sub(repl, _safe(text), count)  # type: ignore[attr-defined,no-any-return]

    def subn(
        self, repl: str | Callable[[LinearMatch], str], text: str, count: int = 0
    ) -> tuple[str, int]:
        return self._regexp.subn(repl, _safe(text), count)  # type: ignore[attr-defined,no-any-return]

    def __repr__(self) -> str:
        return f"linear_regex.compile({self.pattern!r})"


def compile(  # noqa: A001 - mirrors re.compile on purpose
    pattern: str,
    *,
    ignore_case: bool = False,
    multiline: bool = False,
    dotall: bool = False,
) -> LinearPattern:
    """Compile ``pattern`` with RE2, or raise :class:`UnsupportedPattern` saying why."""
    if not isinstance(pattern, str):
        raise UnsupportedPattern("a pattern must be a string")
    flags = "".join(
        flag for flag, on in (("i", ignore_case), ("m", multiline), ("s", dotall)) if on
    )
    options = re2.Options()
    options.max_mem = MAX_MEM
    options.log_errors = False
    source = f"(?{flags}){pattern}" if flags else pattern
    try:
        regexp = re2.compile(source, options)
    except re2.error as error:
        detail = error.args[0] if error.args else error
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise UnsupportedPattern(f"not a linear-time (RE2) pattern: {detail}") from None
    except UnicodeEncodeError:
        raise UnsupportedPattern("the pattern contains a lone surrogate") from None
    return LinearPattern(regexp, pattern)


def is_linear(obj: object) -> bool:
    """True for a pattern compiled here; tests use it to prove nothing else slipped in."""
    return isinstance(obj, LinearPattern)
