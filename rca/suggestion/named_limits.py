"""Limits a message names for a setting that is not a package version, and whether an action
goes against one.

:mod:`.cause_releases` and :mod:`.named_directions` read the releases of *packages* a message
names; the same harm comes from a setting, a format or a level the message rules out: "Unsupported
model IR version: 10, max supported IR version: 9" is not fixed by stamping the model IR 11,
"unsupported pickle protocol: 5" not by saving with protocol 5 again, "Bfloat16 is only
supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute
capability 7.5" not by loading in bfloat16. Each is read into facts:

- :class:`NamedLimit`: a numbered setting (``opset``, ``IR version``, ``pickle protocol``) with
  the value the message rejects and the maximum or minimum it names, from the generic wordings
  of such lines ("unsupported X: V", "max supported X: M", "X M or higher", "at least X M",
  "support ... is till X M", "maximum X is M");
- :class:`RuledOutValue`: a value the message says this hardware or build cannot use
  ("<value> is only supported on ... at least N. Your ... has ... M", M below N;
  "<value> only supports <...> or newer").

:func:`.limit_moves.limit_violations` reads an action's moves of those settings and values
(an option or phrase that sets a number, a verb that raises or lowers it, a mention that uses
the ruled-out value) and rejects a move that contradicts the message, offline or from an
LLM. An unknown bound says nothing: "unsupported opset 17"
alone rules out 17, not every higher opset.

Every pattern is RE2 (:mod:`ingest.linear_regex`) over bounded lines; no setting or value is
known in advance (the words come from the message).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ingest.linear_regex import compile as linear
from rca.suggestion.enough_hardware import measure_words
from rca.suggestion.limit_wordings import line_bounds

__all__ = [
    "NamedLimit",
    "DOWN_WORDS",
    "UP_WORDS",
    "RuledOutValue",
    "name_words",
    "read_named_limits",
    "read_ruled_out_values",
    "show_value",
]

_MAX_LINES = 400
_MAX_LINE = 2000
_MAX_FOUND = 6
_NUM = r"\d+(?:\.\d+)?"
#: A setting's name: one to three words, the last of which may be "version" or "level".
_NAME = r"[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,2}?"
#: Words that join a phrase, not a setting's name ("maximum supported version for reading").
_JOINING = frozenset({"for", "by", "in", "on", "with", "to", "from", "when", "while"})
#: Words of a setting's name that do not tell settings apart (an option key holds none).
_GENERIC = frozenset(
    {"version", "versions", "level", "model", "models", "the", "a", "an", "this", "your", "of"}
)

#: "Unsupported model IR version: 10", "unsupported pickle protocol: 5", "Unsupported ONNX opset
#: version: 17", "opset 9 is not supported".
_REJECTED = (
    linear(rf"\bunsupported (?P<name>{_NAME})\s*:?\s+v?(?P<value>{_NUM})\b", ignore_case=True),
    linear(
        rf"\b(?P<name>{_NAME}) v?(?P<value>{_NUM}) is not (?:yet )?supported\b", ignore_case=True
    ),
)
#: "max supported IR version: 9", "maximum opset is 7", "supports opset 17 max", "Current
#: official support for domain ai.onnx is till opset 15", "up to opset 17".
_MAXIMA = (
    linear(
        rf"\bmax(?:imum)? (?:supported )?(?P<name>{_NAME})\s*(?::|is|=)\s*v?(?P<value>{_NUM})\b",
        ignore_case=True,
    ),
    linear(rf"\bsupports? (?P<name>{_NAME}) (?P<value>{_NUM}) max\b", ignore_case=True),
    linear(rf"\b(?:till|up to) (?P<name>{_NAME}) (?P<value>{_NUM})\b", ignore_case=True),
)
#: "upgrade your model to opset 7 or higher", "requires the minimal opset version of 12",
#: "opset version 7 or above".
_MINIMA = (
    linear(
        rf"\b(?P<name>{_NAME}) v?(?P<value>{_NUM}) or (?:higher|above|newer|later)\b",
        ignore_case=True,
    ),
    linear(
        rf"\bmin(?:imum|imal)? (?:required |supported )?(?P<name>{_NAME}) (?:of |is |= ?)?"
        rf"v?(?P<value>{_NUM})\b",
        ignore_case=True,
    ),
)
#: "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4
#: GPU has compute capability 7.5."
_NEEDS = linear(
    rf"\b(?P<value>[A-Za-z][\w.-]*) (?:is|are) only supported (?:on|with|by|for) [^.\n]{{0,80}}?"
    rf"\bat least (?P<need>{_NUM})\b[^\n]{{0,40}}?\byour\b[^.\n]{{0,80}}?\bhas\b"
    rf"(?P<measure>[^.\n\d]{{0,40}}?)(?P<have>{_NUM})",
    ignore_case=True,
)
#: "FlashAttention only supports Ampere GPUs or newer."
_ONLY_NEWER = linear(
    r"\b(?P<value>[A-Za-z][\w.-]*) only supports [^.\n]{1,60}? or (?:newer|later|above)\b",
    ignore_case=True,
)
#: Verbs that move a setting up or down, and words that say the mention is moved away from.
UP_WORDS = frozenset({"raise", "increase", "upgrade", "bump", "higher", "newer", "later", "above"})
UP_WORDS |= {"latest", "newest", "highest", "greater"}
DOWN_WORDS = frozenset({"lower", "decrease", "downgrade", "reduce", "older", "below"})
DOWN_WORDS |= {"oldest", "lowest", "earlier"}


def name_words(name: str) -> tuple[str, ...]:
    """The telling words of a setting's name, lowercased ("model IR version" -> ("ir",))."""
    parts = [p for p in linear(r"[A-Za-z0-9]+").findall(name.lower()) if p not in _GENERIC]
    return tuple(parts)


def _short(name: str) -> str:
    """A matched setting name cut to its own words: the last one, with the one before it when
    the last is generic ("ONNX opset version" -> "opset version", "stamped with opset" ->
    "opset"): a leftmost match may start a word or two early."""
    parts = name.split()
    keep = 2 if len(parts) > 1 and parts[-1].lower() in _GENERIC else 1
    return " ".join(parts[-keep:])


@dataclass(frozen=True)
class NamedLimit:
    """A numbered setting the message bounds: the value it rejects, its maximum and minimum."""

    name: str
    words: tuple[str, ...]
    rejected: float | None = None
    maximum: float | None = None
    minimum: float | None = None
    #: The message asks for a lower (``lower``) or higher value without a number ("Please use
    #: a lower opset", "IR version 11 is too new"; :mod:`.limit_wordings`).
    lower: bool = False
    higher: bool = False

    def bad(self, value: float) -> bool:
        """Whether ``value`` is one the message rules out."""
        rejected = self.rejected
        return (
            value == rejected
            or (self.maximum is not None and value > self.maximum)
            or (self.minimum is not None and value < self.minimum)
            or (rejected is not None and self.lower and value > rejected)
            or (rejected is not None and self.higher and value < rejected)
        )

    def bad_way(self) -> str | None:
        """ "up" or "down" when moving that way from the rejected value cannot reach the
        supported range (it is above the maximum or below the minimum), else None."""
        if self.lower != self.higher:  # the message names the way itself
            return "up" if self.lower else "down"
        if self.rejected is None:
            return None
        if self.maximum is not None and self.rejected > self.maximum:
            return "up"
        if self.minimum is not None and self.rejected < self.minimum:
            return "down"
        return None

    def describe(self) -> str:
        parts = [f"{self.name}"]
        if self.rejected is not None:
            parts.append(f"{show_value(self.rejected)} is not supported")
        if self.maximum is not None:
            parts.append(f"at most {show_value(self.maximum)}")
        if self.minimum is not None:
            parts.append(f"at least {show_value(self.minimum)}")
        if self.lower != self.higher:
            parts.append(f"it must go {'lower' if self.lower else 'higher'}")
        return ": ".join([parts[0], ", ".join(parts[1:])])


@dataclass(frozen=True)
class RuledOutValue:
    """A value (a dtype, a kernel) the message says this hardware or build cannot use."""

    value: str
    why: str
    measure: tuple[str, ...] = ()
    need: float | None = None


def show_value(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _lines(texts: Sequence[str]) -> list[str]:
    return [line[:_MAX_LINE] for text in texts for line in (text or "").splitlines()[:_MAX_LINES]][
        :_MAX_LINES
    ]


def _matching(found: list[NamedLimit], words: tuple[str, ...]) -> int | None:
    """The index of the limit already read for a setting of these words, if any."""
    for index, limit in enumerate(found):
        if set(limit.words) & set(words):
            return index
    return None


def _named(name: str) -> str:
    """A matched name without the phrase around it: "with opset version" -> "opset version",
    "version for reading" -> "version" (which names no setting: the line's own is meant)."""
    words = name.split()
    while words and words[0].lower() in _JOINING:
        words = words[1:]
    for at, word in enumerate(words):
        if word.lower() in _JOINING:
            return " ".join(words[:at])
    return " ".join(words)


def _line_bounds(line: str) -> list[tuple[str | None, str, float]]:
    """(name, field, value) for each bound the line words, the commonest wordings first."""
    found: list[tuple[str | None, str, float]] = []
    for patterns, field in ((_REJECTED, "rejected"), (_MAXIMA, "maximum"), (_MINIMA, "minimum")):
        for pattern in patterns:
            for match in pattern.finditer(line):
                found.append((_named(match.group("name")), field, float(match.group("value"))))
    return found + line_bounds(line)


def read_named_limits(texts: Sequence[str]) -> tuple[NamedLimit, ...]:
    """The numbered settings the message and log lines bound, each merged over its lines; a
    bound worded without a name (:mod:`.limit_wordings`) is the line's first named setting's."""
    found: list[NamedLimit] = []
    for line in _lines(texts):
        own: tuple[str, tuple[str, ...]] | None = None
        for raw, field, value in _line_bounds(line):
            name = _short(raw.strip()) if raw else None
            words = name_words(name) if name else ()
            if name and words and own is None:
                own = (name, words)
            elif not words:
                if raw or own is None:
                    continue
                name, words = own
            at = _matching(found, words)
            if at is None:
                if len(found) >= _MAX_FOUND:
                    continue
                found.append(NamedLimit(name or "", words))
                at = len(found) - 1
            limit = found[at]
            flag = field in ("lower", "higher")
            if flag or getattr(limit, field) is None:
                update: dict[str, Any] = {field: True if flag else value}
                found[at] = replace(limit, **update)
    return tuple(
        limit
        for limit in found
        if limit.rejected is not None
        or limit.maximum is not None
        or limit.minimum is not None
        or limit.lower != limit.higher
    )


def read_ruled_out_values(texts: Sequence[str]) -> tuple[RuledOutValue, ...]:
    """The values the message says this hardware or build cannot use."""
    found: list[RuledOutValue] = []
    for line in _lines(texts):
        match = _NEEDS.search(line)
        if match and float(match.group("have")) < float(match.group("need")):
            value = match.group("value")
            why, need = match.group(0).strip().rstrip("."), float(match.group("need"))
            found.append(RuledOutValue(value, why, measure_words(match.group("measure")), need))
        match = _ONLY_NEWER.search(line)
        if match:
            found.append(RuledOutValue(match.group("value"), match.group(0).strip()))
    return tuple(found[:_MAX_FOUND])
