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

import re2

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
    def start(self, group: int | str = 0) -> int: ...
    def end(self, group: int | str = 0) -> int: ...
    def span(self, group: int | str = 0) -> tuple[int, int]: ...
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
# The classes over ASCII text, matching there exactly what the Unicode ones match (\p{L}
# is A-Za-z, \p{N} 0-9; of \x{85} and \p{Z} only the space is ASCII). ASCII text runs a
# twin compiled with these: same matches and groups, a far smaller automaton (RE2 took
# its slowest engine for groups with a Unicode \w: 2-3x the time on log lines).
_ASCII_DIGIT = "0-9"
_ASCII_WORD = "A-Za-z0-9_"
_ASCII_SPACE = r"\s\x{1c}-\x{1f}"
_ASCII_OUTSIDE = {
    "d": f"[{_ASCII_DIGIT}]",
    "D": f"[^{_ASCII_DIGIT}]",
    "w": f"[{_ASCII_WORD}]",
    "W": f"[^{_ASCII_WORD}]",
    "s": f"[{_ASCII_SPACE}]",
    "S": f"[^{_ASCII_SPACE}]",
    "Z": r"\z",
}
_ASCII_INSIDE = {"d": _ASCII_DIGIT, "w": _ASCII_WORD, "s": _ASCII_SPACE}


def _python_classes(pattern: str, *, ascii_text: bool = False) -> str:
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
            if ascii_text:
                table = _ASCII_INSIDE if in_class else _ASCII_OUTSIDE
            else:
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


_UNANCHORED = re2._Anchor.UNANCHORED
_ANCHOR_START = re2._Anchor.ANCHOR_START
_ANCHOR_BOTH = re2._Anchor.ANCHOR_BOTH


class _AsciiMatch:
    """A match in ASCII text, where byte offsets are character offsets.

    google-re2's own match object converts UTF-8 offsets back to characters for every
    match, which made a text with many matches ~10x slower than ``re``; incident text is
    almost always ASCII, so that work is skipped there. Template expansion (``\\1``,
    ``\\g<name>``) is google-re2's own.
    """

    __slots__ = ("_names", "_spans", "string")
    _OCTAL_RE = re2._Match._OCTAL_RE
    _GROUP_RE = re2._Match._GROUP_RE
    _split = re2._Match.__dict__["_split"]
    expand = re2._Match.expand

    def __init__(self, string: str, spans: list[tuple[int, int]], names: dict[str, int]) -> None:
        self.string = string
        self._spans = spans
        self._names = names

    def _index(self, group: int | str) -> int:
        if isinstance(group, str):
            if group not in self._names:
                raise IndexError("bad group name")
            return self._names[group]
        if not 0 <= group < len(self._spans):
            raise IndexError("bad group index")
        return group

    def __getitem__(self, group: int | str) -> str | None:
        start, end = self._spans[self._index(group)]
        return None if start < 0 else self.string[start:end]

    def group(self, *groups: int | str) -> Any:
        if len(groups) <= 1:
            return self[groups[0] if groups else 0]
        return tuple(self[g] for g in groups)

    def groups(self, default: str | None = None) -> tuple[str | None, ...]:
        return tuple(
            self[i] if self[i] is not None else default for i in range(1, len(self._spans))
        )

    def groupdict(self, default: str | None = None) -> dict[str, str | None]:
        return {
            name: self[i] if self[i] is not None else default for name, i in self._names.items()
        }

    def start(self, group: int | str = 0) -> int:
        return self._spans[self._index(group)][0]

    def end(self, group: int | str = 0) -> int:
        return self._spans[self._index(group)][1]

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return self._spans[self._index(group)]


class LinearPattern:
    """A compiled RE2 pattern with the ``re.Pattern`` methods our code uses."""

    __slots__ = ("_names", "_raw", "_regexp", "pattern")

    def __init__(self, regexp: Any, pattern: str, ascii_regexp: Any = None) -> None:
        self._regexp = regexp  # google-re2's wrapper (UTF-8 text); the scrubber uses it too
        # What the ASCII paths run: the twin with ASCII classes (_ASCII_OUTSIDE).
        self._raw = (ascii_regexp if ascii_regexp is not None else regexp)._regexp
        self._names = dict(regexp.groupindex)
        self.pattern = pattern

    @property
    def groups(self) -> int:
        return int(self._regexp.groups)

    @property
    def groupindex(self) -> dict[str, int]:
        return dict(self._names)

    def _ascii(self, text: str, pos: int, anchor: Any) -> Iterator[LinearMatch]:
        """google-re2's match loop (same empty-match stepping) on ASCII bytes."""
        data = text.encode("ascii")
        end = len(data)
        pos = max(0, min(pos, end))
        while True:
            spans = self._raw.Match(anchor, data, pos, end)
            if spans[0][0] < 0:
                return
            yield _AsciiMatch(text, spans, self._names)
            if pos == end:
                return
            pos = pos + 1 if pos == spans[0][1] else spans[0][1]

    def _iter(self, text: str, pos: int | None, anchor: Any) -> Iterator[LinearMatch]:
        if not text.isascii():  # (ASCII text has no lone surrogate: nothing to make safe)
            text = _safe(text)
            if not text.isascii():
                return self._regexp._match(anchor, text, pos)  # type: ignore[no-any-return]
        return self._ascii(text, pos or 0, anchor)

    def _first(self, text: str, pos: int | None, anchor: Any) -> LinearMatch | None:
        """The first match of `_iter`: in ASCII text one engine call, no generator."""
        if not text.isascii():
            text = _safe(text)
            if not text.isascii():
                return next(self._regexp._match(anchor, text, pos), None)
        data = text.encode("ascii")
        end = len(data)
        spans = self._raw.Match(anchor, data, max(0, min(pos or 0, end)), end)
        return None if spans[0][0] < 0 else _AsciiMatch(text, spans, self._names)

    def search(self, text: str, pos: int | None = None) -> LinearMatch | None:
        return self._first(text, pos, _UNANCHORED)

    def match(self, text: str, pos: int | None = None) -> LinearMatch | None:
        return self._first(text, pos, _ANCHOR_START)

    def fullmatch(self, text: str) -> LinearMatch | None:
        return self._first(text, None, _ANCHOR_BOTH)

    def finditer(self, text: str) -> Iterator[LinearMatch]:
        return self._iter(text, None, _UNANCHORED)

    def findall(self, text: str) -> list[Any]:
        groups = self.groups
        if groups == 0:
            return [m[0] for m in self.finditer(text)]
        if groups == 1:
            return [m.groups("")[0] for m in self.finditer(text)]
        return [m.groups("") for m in self.finditer(text)]

    def split(self, text: str, maxsplit: int = 0) -> list[str]:
        text = _safe(text)
        pieces: list[str] = []
        end = 0
        for number, m in enumerate(self.finditer(text), 1):
            pieces.append(text[end : m.start()])
            pieces.extend(m[g] for g in range(1, self.groups + 1))
            end = m.end()
            if number == maxsplit:
                break
        pieces.append(text[end:])
        return pieces

    def sub(self, repl: str | Callable[[LinearMatch], str], text: str, count: int = 0) -> str:
        return self.subn(repl, text, count)[0]

    def subn(
        self, repl: str | Callable[[LinearMatch], str], text: str, count: int = 0
    ) -> tuple[str, int]:
        if text.isascii():
            return self._subn_ascii(repl, text, count)
        text = _safe(text)
        literal = isinstance(repl, str) and "\\" not in repl
        pieces: list[str] = []
        end = 0
        number = 0
        for number, m in enumerate(self.finditer(text), 1):  # noqa: B007 - counted below
            pieces.append(text[end : m.start()])
            if callable(repl):
                pieces.append(repl(m))
            else:
                pieces.append(repl if literal else m.expand(repl))  # type: ignore[attr-defined]
            end = m.end()
            if number == count:
                break
        pieces.append(text[end:])
        return "".join(pieces), number

    def _subn_ascii(
        self, repl: str | Callable[[LinearMatch], str], text: str, count: int
    ) -> tuple[str, int]:
        """`subn` in ASCII text: `_ascii`'s loop, with a match object only for a replacement
        that reads one (the grouping normalisers make a dozen passes over each message,
        most of which find nothing, and the rest mostly replace by a literal)."""
        literal = repl if isinstance(repl, str) and "\\" not in repl else None
        data = text.encode("ascii")
        end = len(data)
        match, anchor = self._raw.Match, _UNANCHORED
        pieces: list[str] = []
        pos = last = number = 0
        while True:
            spans = match(anchor, data, pos, end)
            start, stop = spans[0]
            if start < 0:
                break
            pieces.append(text[last:start])
            if literal is not None:
                pieces.append(literal)
            else:
                found = _AsciiMatch(text, spans, self._names)
                pieces.append(repl(found) if callable(repl) else found.expand(repl))
            last = stop
            number += 1
            if number == count or pos == end:
                break
            pos = pos + 1 if pos == stop else stop
        if not number:
            return text, 0
        pieces.append(text[last:])
        return "".join(pieces), number

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
    ascii_body = _python_classes(pattern, ascii_text=True)
    ascii_source = f"(?{flags}){ascii_body}" if flags else ascii_body
    try:
        regexp = re2.compile(source, options)
        ascii_regexp = regexp if ascii_source == source else re2.compile(ascii_source, options)
    except re2.error as error:
        detail = error.args[0] if error.args else error
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise UnsupportedPattern(f"not a linear-time (RE2) pattern: {detail}") from None
    except UnicodeEncodeError:
        raise UnsupportedPattern("the pattern contains a lone surrogate") from None
    return LinearPattern(regexp, pattern, ascii_regexp)


def is_linear(obj: object) -> bool:
    """True for a pattern compiled here; tests use it to prove nothing else slipped in."""
    return isinstance(obj, LinearPattern)
