"""The key prefix an action strips by calling a library function that does it.

``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")`` strips
``module.`` from every key as surely as "strip the `module.` prefix" does, so the answer is
held to the keys the incident shows the same way (:mod:`.key_prefix_sides`). Which functions
do so, and where their prefix argument is, is data:
``rca/knowledge/state-dict-prefix-helpers.toml``.
Linear: one RE2 pattern per function over a bounded action.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear

__all__ = ["DATA", "helper_strips"]

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "state-dict-prefix-helpers.toml"
_MAX_ACTION = 2000
_ARGUMENT = linear(r"\s*(?:[^,()]{0,80}?\([^()]{0,80}\)[^,()]{0,40}|[^,()]{0,120})(?:,|\))")
_QUOTED = linear(r"[`'\"](?P<prefix>[A-Za-z_][\w.]{0,80})[`'\"]")


@dataclass(frozen=True)
class _Helper:
    call: LinearPattern
    argument: int | None
    prefix: str


@functools.cache
def _helpers() -> tuple[_Helper, ...]:
    data = tomllib.loads(DATA.read_text(encoding="utf-8"))
    return tuple(
        _Helper(
            linear(rf"\b{entry['name']}\s*\("),
            entry.get("prefix_argument"),
            entry.get("prefix", ""),
        )
        for entry in data.get("strips", [])
    )


def _argument(text: str, at: int, position: int) -> str:
    """The text of the call's argument at ``position`` (0-based), from just after ``(``."""
    for _ in range(position + 1):
        match = _ARGUMENT.match(text, at)
        if match is None:
            return ""
        start, at = at, match.end()
    return text[start:at]


def helper_strips(action: str) -> list[tuple[int, str]]:
    """(offset, prefix) for each call in ``action`` of a function that strips a prefix from
    every key; the prefix is "" when the call does not spell it."""
    text = (action or "")[:_MAX_ACTION]
    found: list[tuple[int, str]] = []
    for helper in _helpers():
        for match in helper.call.finditer(text):
            prefix = helper.prefix
            if helper.argument is not None:
                quoted = _QUOTED.search(_argument(text, match.end(), helper.argument))
                prefix = quoted.group("prefix") if quoted else ""
            found.append((match.start(), prefix))
    return found
