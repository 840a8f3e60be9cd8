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

:func:`limit_violations` reads an action's moves of those settings and values: an option or a
phrase that sets the setting to a number (``opset_version=18``, "IR version 11", "protocol 5"),
a verb that raises or lowers it ("raise the opset"), a mention that uses the ruled-out value
(``--dtype bfloat16``, "load in bf16"; not "half instead of bfloat16", nor "bf16 on a GPU of
compute capability 8.0": :mod:`.enough_hardware`). A move onto the rejected
value, past the named maximum or below the named minimum, or the wrong way from a rejected
value beyond a bound, contradicts the message: the premise check (:mod:`.premises`) rejects such
a suggestion, offline or from an LLM. An unknown bound says nothing: "unsupported opset 17"
alone rules out 17, not every higher opset.

Every pattern is RE2 (:mod:`ingest.linear_regex`) over bounded lines; no setting or value is
known in advance (the words come from the message).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ingest.linear_regex import compile as linear
from rca.suggestion.enough_hardware import measure_words, moves_to_enough
from rca.suggestion.limit_wordings import attach_open_ranges, line_bounds, open_range
from rca.suggestion.shown_tensors import dtype_of
from rca.suggestion.step_options import options_set_by

__all__ = [
    "NamedLimit",
    "RuledOutValue",
    "limit_violations",
    "moved_limits",
    "read_named_limits",
    "read_ruled_out_values",
]

_MAX_LINES = 400
_MAX_LINE = 2000
_MAX_ACTION = 2000
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
_UP = frozenset({"raise", "increase", "upgrade", "bump", "higher", "newer", "later", "above"})
_UP |= {"latest", "newest", "highest", "greater"}
_DOWN = frozenset({"lower", "decrease", "downgrade", "reduce", "older", "below"})
_DOWN |= {"oldest", "lowest", "earlier"}
#: Words just after the setting that move it ("set the opset higher").
_UP_AFTER = frozenset({"higher", "newer", "up", "later"})
_DOWN_AFTER = frozenset({"lower", "older", "down", "earlier"})
_AWAY = frozenset(
    {"instead", "rather", "from", "not", "avoid", "disable", "without", "than", "no", "never"}
    | {"lacks", "lack", "unsupported", "cannot"}
)
#: Words before a mention that make it a capability of something else ("a release that
#: supports IR version 10", "a GPU that supports bfloat16"), not a move of the setting.
_CAPABILITY = frozenset({"support", "supports", "supporting", "reads", "accepts", "handles"})
#: Words before a value that put it to use ("load in bf16", "set bf16=True", "switch to").
_USE = frozenset(
    {"use", "using", "load", "run", "set", "enable", "keep", "switch", "train", "in", "to"}
    | {"with", "pass", "cast", "convert", "=", "as"}
)
_WORD = linear(r"[A-Za-z0-9_.+-]+")


def _words(name: str) -> tuple[str, ...]:
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
            parts.append(f"{_show(self.rejected)} is not supported")
        if self.maximum is not None:
            parts.append(f"at most {_show(self.maximum)}")
        if self.minimum is not None:
            parts.append(f"at least {_show(self.minimum)}")
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


def _show(value: float) -> str:
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
            words = _words(name) if name else ()
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


def _canonical(word: str) -> str:
    """A value as compared: a dtype by its canonical name, else lowercase letters and digits."""
    word = word.strip("`'\".,;:()[]").lower()
    dtype = dtype_of(word.removeprefix("torch.").removeprefix("jnp.").removeprefix("np."))
    return dtype or "".join(char for char in word if char.isalnum())


def _names_value(token: str, value: str) -> bool:
    """Whether an action's token names the ruled-out value (``bf16`` for Bfloat16,
    ``flash_attention_2`` for FlashAttention)."""
    got, want = _canonical(token), _canonical(value)
    return bool(got) and (got == want or (len(want) >= 6 and got.startswith(want)))


def _number_after(tokens: list[str], at: int, limit: NamedLimit) -> float | None:
    """The number an action gives a setting named at ``at``: the next token or the one after
    a joining word ("opset 18", "IR version 11", "protocol to 4", "opset_version=18"); an
    open range ("14 or higher") as the closest value it allows (:func:`.open_range`)."""
    for offset, token in enumerate(tokens[at + 1 : at + 4], at + 1):
        token = token.strip("`'\".,;:()[]=")
        if token.lower() in ("to", "=", "version", "of", "at", "v", ""):
            continue
        try:
            value = float(token.lstrip("v"))
        except ValueError:
            return None
        return open_range(value, tokens[offset + 1 : offset + 3], limit.minimum, limit.maximum)
    return None


def _clause_tokens(text: str) -> list[list[str]]:
    """The action's tokens, clause by clause (a colon, semicolon, comma or parenthesis ends
    one): "use float16: bfloat16 needs 8.0" does not put bfloat16 to use."""
    return [
        _WORD.findall(clause.replace("=", " = "))
        for clause in linear(r"[;:,()]").split(text)
        if clause.strip()
    ]


def _limit_reason(tokens: list[str], limit: NamedLimit, raising: bool) -> str | None:
    """Why ``tokens`` (one clause) move ``limit``'s setting where the message rules out. In
    an action that raises the setting (``raising``), a number under the minimum is an example
    of the move ("a newer opset (... --opset 17)" for an operator added in 18), not one."""
    lowered = [token.lower().strip(".") for token in tokens]
    for at, token in enumerate(lowered):
        if not set(_words(token.replace("_", " "))) & set(limit.words):
            continue
        before = set(lowered[max(0, at - 6) : at])
        if before & _CAPABILITY:
            continue  # what another release or device supports, not a move of the setting
        value = _number_after(tokens, at, limit)
        low = value is not None and limit.minimum is not None and value < limit.minimum
        if value is not None and limit.bad(value) and not before & _AWAY:
            if raising and low and value != limit.rejected:
                continue
            return f"the message says {limit.describe()}; the action sets it to {_show(value)}"
        way = limit.bad_way()
        after = set(lowered[at + 1 : at + 3]) & (_UP_AFTER if way == "up" else _DOWN_AFTER)
        if way and value is None and (_moved_way(lowered, at, way) or after):
            return (
                f"the message says {limit.describe()}; moving it {way} goes further from the"
                " supported range"
            )
    return None


def _moves(tokens: list[str], limit: NamedLimit) -> bool:
    """Whether ``tokens`` (one clause) move ``limit``'s setting at all: give it a number or a
    way ("opset 17", "a lower opset", "raise the opset"), whichever way that goes."""
    lowered = [token.lower().strip(".") for token in tokens]
    for at, token in enumerate(lowered):
        if not set(_words(token.replace("_", " "))) & set(limit.words):
            continue
        if set(lowered[max(0, at - 6) : at]) & _CAPABILITY:
            continue
        if _number_after(tokens, at, limit) is not None:
            return True
        if set(lowered[max(0, at - 6) : at]) & (_UP | _DOWN):
            return True
        if set(lowered[at + 1 : at + 3]) & (_UP_AFTER | _DOWN_AFTER):
            return True
    return False


def moved_limits(action: str, limits: Sequence[NamedLimit]) -> tuple[NamedLimit, ...]:
    """The limits whose setting ``action`` moves itself, either way: an answer that restates
    a step is judged by its own moves of these (:func:`.premises.shown_harms`), not the step's."""
    clauses = _clause_tokens(attach_open_ranges((action or "")[:_MAX_ACTION]))
    return tuple(limit for limit in limits if any(_moves(tokens, limit) for tokens in clauses))


def _moved_way(lowered: list[str], at: int, way: str) -> bool:
    """Whether a word before the setting at ``at`` moves it ``way``, not turned down by a
    word just before it ("not a newer opset", "instead of a higher opset")."""
    moves = _UP if way == "up" else _DOWN
    for index in range(at - 1, max(0, at - 6) - 1, -1):
        if lowered[index] in moves:
            return not set(lowered[max(0, index - 3) : index]) & _AWAY
    return False


def _value_reason(tokens: list[str], ruled: RuledOutValue, option_values: list[str]) -> str | None:
    lowered = [token.lower().strip(".") for token in tokens]
    for at, token in enumerate(tokens):
        if not _names_value(token, ruled.value):
            continue
        if set(lowered[max(0, at - 4) : at]) & (_AWAY | _CAPABILITY):
            continue  # "half instead of bfloat16": the action moves away from it
        set_to = any(_names_value(value, ruled.value) for value in option_values)
        if not set_to and not set(lowered[max(0, at - 3) : at]) & _USE:
            continue  # named, not put to use ("bfloat16 needs compute capability 8.0")
        return f"the message says {ruled.why}; the action still uses {token}"
    return None


def limit_violations(
    action: str, limits: Sequence[NamedLimit], ruled_out: Sequence[RuledOutValue]
) -> list[str]:
    """Why ``action`` goes against a limit or a ruled-out value the message names (empty: it
    does not)."""
    text = attach_open_ranges((action or "")[:_MAX_ACTION])
    clauses = _clause_tokens(text)
    option_values = [option.value or "" for option in options_set_by(text)]
    reasons: list[str] = []
    raising = any({token.lower() for token in tokens} & _UP for tokens in clauses)
    for limit in limits:
        found = [r for tokens in clauses if (r := _limit_reason(tokens, limit, raising))]
        reasons += found[:1]
    for ruled in ruled_out:
        if ruled.need is not None and moves_to_enough(text, ruled.measure, ruled.need):
            continue  # onto hardware the message says supports it (:mod:`.enough_hardware`)
        found = [r for tokens in clauses if (r := _value_reason(tokens, ruled, option_values))]
        reasons += found[:1]
    return reasons
