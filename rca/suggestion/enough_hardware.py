"""Whether an action moves to hardware the message names as enough for a ruled-out value.

"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4
GPU has compute capability 7.5" rules bfloat16 out on *this* GPU, not everywhere: "Run on a
GPU of compute capability 8.0 or newer" is a real fix, and the bfloat16 it names then runs
where the message says it is supported. :mod:`.named_limits` would otherwise read the
mention as "still uses bfloat16" and reject the move to the newer hardware.

An action moves there when it names the measure the message gives the hardware ("compute
capability", read from "Your ... has <measure> 7.5") with a number at or above the one the
message requires ("8.0", "8.6", "9.0 or newer"). A number below it ("compute capability
7.5"), or no measure at all ("set dtype=bfloat16"), keeps the value on the old hardware.
Every pattern is RE2 (:mod:`ingest.linear_regex`) over the bounded action.
"""

from __future__ import annotations

from ingest.linear_regex import compile as linear

__all__ = ["measure_words", "moves_to_enough"]

_MAX_ACTION = 2000
_WORD = linear(r"[a-z][a-z0-9-]*")
_NUMBER = linear(r"\d+(?:\.\d+)?")
#: Words of a measure's phrase that do not name it ("has a compute capability of").
_FILLER = frozenset({"a", "an", "the", "of", "only", "its", "is", "version"})
#: How many characters after the measure's last word its number may come ("capability of
#: at least 8.0", "capability (`sm_80`) 8.0").
_REACH = 40


def measure_words(phrase: str) -> tuple[str, ...]:
    """The telling words of the measure the message gives the hardware ("compute capability"
    from " compute capability "); empty when the message names none."""
    return tuple(word for word in _WORD.findall(phrase.lower()) if word not in _FILLER)


def moves_to_enough(action: str, measure: tuple[str, ...], need: float) -> bool:
    """Whether ``action`` names ``measure`` with a number at or above ``need``."""
    if not measure:
        return False
    text = (action or "")[:_MAX_ACTION].lower()
    phrase = linear(r"\b" + r"\W+".join(measure) + r"\b")
    for match in phrase.finditer(text):
        number = _NUMBER.search(text[match.end() : match.end() + _REACH])
        if number and float(number.group(0)) >= need:
            return True  # the first number only: "capability 7.5 with 8-bit" stays 7.5
    return False
