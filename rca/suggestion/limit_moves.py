"""Whether an action moves a setting or uses a value the message rules out (the facts of
:mod:`.named_limits`): the answer's side of those limits.

An option or a phrase that sets the setting to a number (``opset_version=18``, "IR version
11", "protocol 5"), a verb that raises or lowers it ("raise the opset"), a mention that uses
the ruled-out value (``--dtype bfloat16``, "load in bf16"; not "half instead of bfloat16", nor
"bf16 on a GPU of compute capability 8.0": :mod:`.enough_hardware`). A move onto the rejected
value, past the named maximum or below the named minimum, or the wrong way from a rejected
value beyond a bound, contradicts the message (:mod:`.premises`). What the action reports
rather than does ("since the T4 has compute capability 7.5", "; the model has IR version 10")
is no move (:mod:`.reported_clauses`).

Every pattern is RE2 (:mod:`ingest.linear_regex`) over a capped action.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear
from rca.suggestion.enough_hardware import moves_to_enough
from rca.suggestion.limit_wordings import attach_open_ranges, open_range
from rca.suggestion.named_limits import (
    DOWN_WORDS,
    UP_WORDS,
    NamedLimit,
    RuledOutValue,
    name_words,
    show_value,
)
from rca.suggestion.old_mentions import anywhere
from rca.suggestion.reported_clauses import without_reports
from rca.suggestion.shown_tensors import dtype_of
from rca.suggestion.step_options import options_set_by

__all__ = ["limit_violations", "moved_limits"]

_MAX_ACTION = 2000
#: Words just after the setting that move it ("set the opset higher").
_UP_AFTER = frozenset({"higher", "newer", "up", "later"})
_DOWN_AFTER = frozenset({"lower", "older", "down", "earlier"})
#: Words near a mention that move away from it ("half instead of bfloat16", "not a newer
#: opset", "a T4 lacks bfloat16"): :mod:`.old_mentions`, read over the words before it. Not the
#: current-state or judged-old groups: "the older opset 13" may be where the answer moves.
_AWAY = anywhere(
    *("preference", "source", "comparison", "negation", "exclusion", "removal", "incapable")
)
#: Words before a mention that make it a capability of something else ("a release that
#: supports IR version 10", "a GPU that supports bfloat16"), not a move of the setting.
_CAPABILITY = anywhere("capability")
#: Words before a value that put it to use ("load in bf16", "set bf16=True", "switch to").
_USE = frozenset(
    {"use", "using", "load", "run", "set", "enable", "keep", "switch", "train", "in", "to"}
    | {"with", "pass", "cast", "convert", "=", "as"}
)
_WORD = linear(r"[A-Za-z0-9_.+-]+")


def _marked(pattern: LinearPattern, words: list[str]) -> bool:
    """Whether ``words`` (lower case, in order) hold one of ``pattern``'s words or phrases."""
    return pattern.search(" ".join(words)) is not None


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
        if not set(name_words(token.replace("_", " "))) & set(limit.words):
            continue
        before = lowered[max(0, at - 6) : at]
        if _marked(_CAPABILITY, before):
            continue  # what another release or device supports, not a move of the setting
        value = _number_after(tokens, at, limit)
        low = value is not None and limit.minimum is not None and value < limit.minimum
        if value is not None and limit.bad(value) and not _marked(_AWAY, before):
            if raising and low and value != limit.rejected:
                continue
            return f"the message says {limit.describe()}; the action sets it to {show_value(value)}"
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
        if not set(name_words(token.replace("_", " "))) & set(limit.words):
            continue
        if _marked(_CAPABILITY, lowered[max(0, at - 6) : at]):
            continue
        if _number_after(tokens, at, limit) is not None:
            return True
        if set(lowered[max(0, at - 6) : at]) & (UP_WORDS | DOWN_WORDS):
            return True
        if set(lowered[at + 1 : at + 3]) & (_UP_AFTER | _DOWN_AFTER):
            return True
    return False


def moved_limits(action: str, limits: Sequence[NamedLimit]) -> tuple[NamedLimit, ...]:
    """The limits whose setting ``action`` moves itself, either way: an answer that restates
    a step is judged by its own moves of these (:func:`.premises.shown_harms`), not the step's."""
    clauses = _clause_tokens(attach_open_ranges(without_reports((action or "")[:_MAX_ACTION])))
    return tuple(limit for limit in limits if any(_moves(tokens, limit) for tokens in clauses))


def _moved_way(lowered: list[str], at: int, way: str) -> bool:
    """Whether a word before the setting at ``at`` moves it ``way``, not turned down by a
    word just before it ("not a newer opset", "instead of a higher opset")."""
    moves = UP_WORDS if way == "up" else DOWN_WORDS
    for index in range(at - 1, max(0, at - 6) - 1, -1):
        if lowered[index] in moves:
            return not _marked(_AWAY, lowered[max(0, index - 3) : index])
    return False


def _value_reason(tokens: list[str], ruled: RuledOutValue, option_values: list[str]) -> str | None:
    lowered = [token.lower().strip(".") for token in tokens]
    for at, token in enumerate(tokens):
        if not _names_value(token, ruled.value):
            continue
        window = lowered[max(0, at - 4) : at]
        if _marked(_AWAY, window) or _marked(_CAPABILITY, window):
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
    said = attach_open_ranges(without_reports((action or "")[:_MAX_ACTION]))
    clauses = _clause_tokens(said)  # a measurement quoted as the reason is no move
    option_values = [option.value or "" for option in options_set_by(said)]
    reasons: list[str] = []
    raising = any({token.lower() for token in tokens} & UP_WORDS for tokens in clauses)
    for limit in limits:
        found = [r for tokens in clauses if (r := _limit_reason(tokens, limit, raising))]
        reasons += found[:1]
    for ruled in ruled_out:
        if ruled.need is not None and moves_to_enough(text, ruled.measure, ruled.need):
            continue  # onto hardware the message says supports it (:mod:`.enough_hardware`)
        found = [r for tokens in clauses if (r := _value_reason(tokens, ruled, option_values))]
        reasons += found[:1]
    return reasons
