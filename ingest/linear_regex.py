"""The one place that compiles regular expressions which run over attacker-written text.

Incident messages, stack traces, logs, runbook signals and LLM output are written by
whoever can reach the API, so a backtracking engine (Python's ``re``) lets one crafted
message hold a worker for seconds per extra character. Every such pattern is compiled
here with RE2 (the ``google-re2`` bindings), whose automaton runs in time linear in the
input whatever the pattern. RE2 has no lookaround and no backreferences: a pattern that
needs them is rewritten (or the work is done in plain Python over a capped input), and
``compile`` raises :class:`UnsupportedPattern` instead of silently falling back to
``re`` -- there is no fallback policy, by design.

RE2 reads ``\\d``, ``\\w`` and ``\\s`` as ASCII classes; ``compile`` rewrites them to the
Unicode classes ``re`` uses (so a no-break space is still a space and ``josé`` still a
word), and ``\\Z`` to RE2's ``\\z``. What remains different, knowingly:

- ``\\b`` is an ASCII word boundary (RE2 has no Unicode one): ``é1`` has a boundary
  between its characters here.
- ``$`` without ``multiline`` matches only at the very end (``re`` also matches before
  a final newline); callers match lines, or strip the text first.
- Flags are keyword arguments; ``re.VERBOSE`` does not exist.

Memory is bounded too: each pattern's automaton may use at most :data:`MAX_MEM` bytes;
when its DFA cache fills RE2 falls back to its (still linear) NFA rather than failing.
Lone surrogates (JSON allows ``"\\ud800"``) cannot be encoded to UTF-8 for RE2, so they
are matched as ``?``; the text keeps its length, so match offsets stay valid.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import re2  # type: ignore[import-untyped]

MAX_MEM = 8 << 20
"""Bytes of automaton memory per pattern (RE2's default); 8 MiB keeps ~100 patterns < 1 GiB."""


class UnsupportedPattern(ValueError):
    """The pattern uses syntax RE2 cannot run in linear time (lookaround, backreferences)."""


class LinearMatch(Protocol):
    """The subset of ``re.Match`` that RE2 matches provide.

    Groups are typed ``str | Any`` exactly as typeshed types ``re.Match`` (a group that
    did not take part is None), so code moved from ``re`` type-checks unchanged.
    """

    def group(self, *groups: int | str) -> str | Any: ...
    def groups(self, default: str | None = None) -> tuple[str | Any, ...]: ...
    def groupdict(self, default: str | None = None) -> dict[str, str | Any]: ...
    def start(self, group: int = 0) -> int: ...
    def end(self, group: int = 0) -> int: ...
    def span(self, group: int = 0) -> tuple[int, int]: ...
    def __getitem__(self, group: int | str) -> str | Any: ...
    @property
    def string(self) -> str: ...


# What ``re`` means by \d, \w and \s on str (isdecimal, isalnum or "_", isspace).
_DIGIT = r"\p{Nd}"
_WORD = r"\p{L}\p{N}_"
_SPACE = r"\s\x{1c}-\x{1f}\x{85}\p{Z}"
_OUTSIDE = {
    "d": _DIGIT,
    "D": r"\P{Nd}",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
    "Z": r"\z",
}
_INSIDE = {"d": _DIGIT, "w": _WORD, "s": _SPACE}


def _python_classes(pattern: str) -> str:
    """Rewrite ``re``'s Unicode shorthands into RE2 syntax; refuse what cannot be kept.

    A negated shorthand inside a class (``[\\S]``) has no RE2 spelling that keeps the
    Unicode meaning, so it is refused rather than silently narrowed.
    """
    out: list[str] = []
    in_class = False
    class_start = -1
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            table = _INSIDE if in_class else _OUTSIDE
            if escaped in table:
                out.append(table[escaped])
            elif in_class and escaped in "DWS":
                raise UnsupportedPattern(
                    f"\\{escaped} inside [...] cannot keep its Unicode meaning in RE2; "
                    "use a negated class instead"
                )
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if not in_class and char == "[":
            in_class = True
            class_start = i + 1
            if pattern.startswith("^", class_start):
                class_start += 1
                out.append("[^")
                i += 2
                continue
        elif in_class and char == "]" and i != class_start:
            in_class = False
        out.append(char)
        i += 1
    return "".join(out)


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

    def findall(self, text: str) -> list[Any]:
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


@functools.lru_cache(maxsize=1024)
def compile(  # noqa: A001 - mirrors re.compile on purpose
    pattern: str,
    *,
    ignore_case: bool = False,
    multiline: bool = False,
    dotall: bool = False,
) -> LinearPattern:
    """Compile ``pattern`` with RE2, or raise :class:`UnsupportedPattern` saying why.

    Cached, so a pattern written inline at its one call site costs a dict lookup.
    """
    if not isinstance(pattern, str):
        raise UnsupportedPattern("a pattern must be a string")
    flags = "".join(
        flag for flag, on in (("i", ignore_case), ("m", multiline), ("s", dotall)) if on
    )
    options = re2.Options()
    options.max_mem = MAX_MEM
    options.log_errors = False
    body = _python_classes(pattern)
    source = f"(?{flags}){body}" if flags else body
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
