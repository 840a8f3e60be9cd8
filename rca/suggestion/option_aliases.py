"""Other spellings of one option, from ``rca/knowledge/option-aliases.toml``.

A framework that wraps a library renames its switches: Hugging Face's
``ddp_find_unused_parameters`` is DistributedDataParallel's ``find_unused_parameters``, and
Lightning's ``strategy="ddp_find_unused_parameters_true"`` sets it to True. Which option a
name (and value) sets is data; :func:`canonical` reads it for any option with aliases, so an
answer setting the alias repeats an incident showing the option set, and the reverse
(:mod:`rca.suggestion.step_options`, :mod:`rca.suggestion.premises`).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DATA", "Alias", "aliases", "canonical"]

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "option-aliases.toml"


@dataclass(frozen=True)
class Alias:
    """``name`` sets ``option``: with its own value, or with ``values``' one for each of its
    values listed there (keys compared in lower case)."""

    option: str
    name: str
    source: str
    values: dict[str, str] = field(default_factory=dict)


@functools.cache
def aliases() -> tuple[Alias, ...]:
    with DATA.open("rb") as handle:
        table = tomllib.load(handle)
    return tuple(
        Alias(
            item["option"],
            item["name"],
            item["source"],
            {str(k).lower(): str(v) for k, v in item.get("values", {}).items()},
        )
        for item in table.get("alias", [])
    )


@functools.cache
def _by_name() -> dict[str, tuple[Alias, ...]]:
    found: dict[str, tuple[Alias, ...]] = {}
    for alias in aliases():
        found[alias.name] = (*found.get(alias.name, ()), alias)
    return found


def canonical(key: str, value: str | None) -> tuple[str, str | None]:
    """The option (key as :func:`rca.suggestion.step_options.option_key` makes it) and value
    that ``key`` set to ``value`` amounts to: itself unless it is an alias (the last part of
    a dotted name counts: ``training_args.ddp_find_unused_parameters``)."""
    head, dot, last = key.rpartition(".")
    for alias in _by_name().get(last, ()):
        if not alias.values:
            return head + dot + alias.option, value
        given = (value or "").strip().strip("`'\"").lower()
        if given in alias.values:
            return head + dot + alias.option, alias.values[given]
    return key, value
