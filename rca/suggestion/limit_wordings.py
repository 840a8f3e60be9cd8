"""More wordings of a bound a message names for a setting: read into (name, field, value).

:mod:`.named_limits` reads the commonest lines ("Unsupported model IR version: 10, max
supported IR version: 9"). Tools word the same fact in many other ways, and each one missed
lets a suggestion raise a value the installed tool already rejects as too new (or lower one
it rejects as too old). The kinds read here, each a generic wording with no setting known in
advance:

- a comparison: "Your model ir_version 10 is higher than the checker's (9)", "gcc versions
  later than 11 are not supported", "only supports devices of CUDA Capability >= 7.0",
  "requires opset <= 17", "opset 17 or lower";
- a bound without a name, which belongs to the setting the same line names: "unsupported
  opset version 18 (current max 17)", "a PyTorch file with version 10, but the maximum
  supported version for reading is 6", "Support for this operator was added in version 14",
  "supported range is [7, 17]";
- a direction without a number: "Please use a lower opset", "An older version of this
  builtin might be supported", "Your model ir_version is higher than the checker's" (field
  ``lower``; ``higher`` for the converse), "opset 18 is too new";
- a value the device or file has that the message rejects: "your device is of CUDA
  capability 6.1", "a PyTorch file with version 10", "opcode 'X' version '9'".

``name`` None means "the setting this line names": :func:`.named_limits.read_named_limits`
gives it the first one the line names. Every pattern is RE2 (:mod:`ingest.linear_regex`) over
one bounded line.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear

__all__ = ["FIELDS", "line_bounds"]

FIELDS = ("rejected", "maximum", "minimum", "lower", "higher")
_NUM = r"\d+(?:\.\d+)?"
_NAME = r"[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,2}?"
_I = {"ignore_case": True}

#: (pattern, field) for wordings that name the setting (group ``name``) and one value.
_NAMED = (
    # "Your model ir_version 10 is higher than the checker's (9)": rejected, then maximum (the
    # bound in parentheses: "rank 64 is greater than max_lora_rank 16" compares two settings).
    (
        linear(
            rf"\b(?P<name>{_NAME}) v?(?P<value>{_NUM}) is (?:higher|greater|newer|later) than"
            rf"[^()\n\d]{{0,60}}?\(v?(?P<bound>{_NUM})\)",
            **_I,
        ),
        "rejected",
    ),
    # "gcc versions later than 11 are not supported", "opset newer than 17 is not supported".
    (
        linear(
            rf"\b(?P<name>{_NAME}) (?:versions? )?(?:later|newer|higher|greater|above) than"
            rf" v?(?P<value>{_NUM}) (?:are|is) not supported\b",
            **_I,
        ),
        "maximum",
    ),
    # "opset 17 or lower", "protocol 4 or below".
    (
        linear(
            rf"\b(?P<name>{_NAME}) v?(?P<value>{_NUM}) or (?:lower|below|older|earlier|less)\b",
            **_I,
        ),
        "maximum",
    ),
    # "the minimum cuda capability supported by this library is 5.0".
    (
        linear(
            rf"\bmin(?:imum|imal)? (?P<name>{_NAME}) supported by [^.\n]{{0,40}}? is"
            rf" v?(?P<value>{_NUM})\b",
            **_I,
        ),
        "minimum",
    ),
    # "your device is of CUDA capability 6.1", "which is of cuda capability 3.7".
    (
        linear(
            rf"\b(?:which|device|gpu|card) (?:is of|has) (?:a )?(?P<name>{_NAME}) (?:of )?"
            rf"v?(?P<value>{_NUM})\b",
            **_I,
        ),
        "rejected",
    ),
    # "Attempted to read a PyTorch file with version 10, but ...".
    (
        linear(rf"\b(?P<name>{_NAME}) with version v?(?P<value>{_NUM}),? but\b", **_I),
        "rejected",
    ),
    # "opset 18 is unsupported", "IR version 11 is too new".
    (
        linear(
            rf"\b(?P<name>{_NAME}) v?(?P<value>{_NUM}) is (?:unsupported|not recognized|unknown)\b",
            **_I,
        ),
        "rejected",
    ),
    # TFLite: "Didn't find op for builtin opcode 'CONV_2D' version '5'".
    (
        linear(rf"\b(?P<name>opcode|op|operator) '?[\w.]+'? version '?(?P<value>{_NUM})'?", **_I),
        "rejected",
    ),
)
#: (pattern, op group) for comparisons: "supports devices of CUDA Capability >= 7.0",
#: "requires opset <= 17", "opset_version must be <= 17".
_COMPARED = linear(
    rf"\b(?:supports?|requires?|must be|should be|expected|needs?)\b[^.\n]{{0,40}}?"
    rf"(?P<name>{_NAME})\s*(?P<op><=|<|>=|>)\s*v?(?P<value>{_NUM})\b",
    **_I,
)
_COMPARED_AFTER = linear(
    rf"\b(?P<name>{_NAME}) (?:must|should) be\s*(?P<op><=|<|>=|>|at most"
    rf"|no (?:greater|higher|more) than"
    rf"|less than or equal to|at least|no (?:less|lower) than|greater than or equal to)"
    rf" v?(?P<value>{_NUM})\b",
    **_I,
)
#: Too new / too old with the value: "IR version 11 is too new".
_TOO = linear(
    rf"\b(?P<name>{_NAME}) v?(?P<value>{_NUM}) is too (?P<age>new|high|recent|old|low)\b", **_I
)
#: (pattern, field) for bounds without a name, which belong to the line's named setting.
_UNNAMED = (
    (
        linear(
            rf"\b(?:current |the )?max(?:imum)?(?: (?:supported|allowed|known))?(?: version)?"
            rf"(?: (?:for|by) [A-Za-z ]{{1,30}}?)?\s*(?:is|:|=|of)?\s*v?(?P<value>{_NUM})\b",
            **_I,
        ),
        "maximum",
    ),
    (
        linear(
            rf"\bmin(?:imum)?(?: (?:supported|required))?(?: version)?\s*(?:is|:|=|of)\s*"
            rf"v?(?P<value>{_NUM})\b|\badded in (?:opset )?version v?(?P<value2>{_NUM})\b",
            **_I,
        ),
        "minimum",
    ),
    (
        linear(
            r"\ban? (?:older|earlier|lower) version of this \w+ (?:might|may|could) be supported\b"
            r"|\b(?:use|choose|try|pick|set) (?:a |an )?(?:lower|older|smaller|earlier) (?:one|"
            r"value|version)\b",
            **_I,
        ),
        "lower",
    ),
)
#: "Your model ir_version is higher than the checker's.", "the opset is too new": the way to go,
#: with no number (too old is left to the package readers: "the driver is too old").
_WAY_NAMED = linear(
    rf"\b(?P<name>{_NAME}) is (?:(?P<more>higher|greater|newer) than (?:the |this )?\w+"
    rf"|too (?P<age>new|recent|high))\b",
    **_I,
)
#: "Please use a lower opset": a direction for a named setting.
_LOWER_NAMED = linear(
    rf"\b(?:use|choose|try|pick|set|export with) (?:a |an )?(?P<dir>lower|older|smaller|earlier"
    rf"|higher|newer|larger|later) (?P<name>{_NAME})\b",
    **_I,
)
#: "supported range is [7, 17]", "valid values are 7 to 17".
_RANGE = linear(
    rf"\b(?:supported|valid|allowed) (?:range|values?)(?: is| are)?:?\s*\[?\s*v?(?P<lo>{_NUM})"
    rf"\s*(?:,|-|to|\.\.)\s*v?(?P<hi>{_NUM})",
    **_I,
)
_UP_WORDS = frozenset({"higher", "newer", "larger", "later"})


def _value(text: str | None) -> float:
    return float(text) if text else 0.0


def line_bounds(line: str) -> list[tuple[str | None, str, float]]:
    """(setting name or None for the line's own, field of :data:`FIELDS`, value) for each
    bound this line words in one of the ways above (``lower``/``higher`` carry 0)."""
    found: list[tuple[str | None, str, float]] = []
    for pattern, field in _NAMED:
        for match in pattern.finditer(line):
            found.append((match.group("name"), field, _value(match.group("value"))))
            if match.groupdict().get("bound"):
                found.append((match.group("name"), "maximum", _value(match.group("bound"))))
    for match in _COMPARED.finditer(line):
        field = "maximum" if match.group("op").startswith("<") else "minimum"
        found.append((match.group("name"), field, _value(match.group("value"))))
    for match in _COMPARED_AFTER.finditer(line):
        op = match.group("op").lower()
        field = (
            "minimum" if op.startswith((">", "at least", "no less", "no lower", "greater")) else ""
        )
        found.append((match.group("name"), field or "maximum", _value(match.group("value"))))
    for match in _TOO.finditer(line):
        field = "lower" if match.group("age").lower() in ("new", "high", "recent") else "higher"
        found += [(match.group("name"), "rejected", _value(match.group("value"))), (None, field, 0)]
    for pattern, field in _UNNAMED:
        for match in pattern.finditer(line):
            groups = match.groupdict()
            found.append((None, field, _value(groups.get("value") or groups.get("value2"))))
    for match in _WAY_NAMED.finditer(line):
        found.append((match.group("name"), "lower", 0.0))  # the value is above the range
    for match in _LOWER_NAMED.finditer(line):
        field = "higher" if match.group("dir").lower() in _UP_WORDS else "lower"
        found.append((match.group("name"), field, 0.0))
    for match in _RANGE.finditer(line):
        found += [(None, "minimum", _value(match.group("lo")))]
        found += [(None, "maximum", _value(match.group("hi")))]
    return found


#: A value's open range, "14 or higher", read after a closing parenthesis or backtick too
#: ("`opset_version=14`) or higher"), which would otherwise end the clause before it.
_OPEN_AFTER_CLOSE = linear(
    r"[)`]+\s+or\s+(higher|newer|later|above|greater|lower|older|earlier|below|less)\b",
    ignore_case=True,
)
_OPEN_UP = frozenset({"higher", "newer", "later", "above", "greater"})
_OPEN_DOWN = frozenset({"lower", "older", "earlier", "below", "less"})


def attach_open_ranges(action: str) -> str:
    """``action`` with "...14`) or higher" written "...14 or higher", so the open range stays
    in the clause of its value."""
    return _OPEN_AFTER_CLOSE.sub(lambda m: f" or {m.group(1)}", action)


def open_range(
    value: float, following: Sequence[str], minimum: float | None, maximum: float | None
) -> float:
    """The value an action's "``value`` or higher" (or "or lower") allows that is closest to
    the message's bound: "14 or higher" holds a minimum of 17, so it does not move below it
    (a runbook's example number, not a move); "14" alone would."""
    words = [word.lower().strip(".,;:)`") for word in following]
    if words[:1] != ["or"]:
        return value
    if set(words[1:]) & _OPEN_UP and minimum is not None:
        return max(value, minimum)
    if set(words[1:]) & _OPEN_DOWN and maximum is not None:
        return min(value, maximum)
    return value
