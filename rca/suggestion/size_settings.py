"""Which settings and phrases name one size quantity, from ``rca/knowledge/size-settings.toml``.

A message states a limit of a quantity in its own words ("max_position_embeddings=32768",
"n_ctx_train (4096)", "maximum batch size (16)"); an answer moves the same quantity under
another tool's name (``--max-model-len``, ``-c``, "the batch size"). Which names belong to one
quantity is data read from each tool's documentation, not code: :mod:`.size_limits` reads the
message's bound, :mod:`.size_moves` the answer's move, both through :func:`family_of`.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from rca.suggestion.step_options import option_key

__all__ = ["DATA", "SizeNames", "family_of", "size_names"]

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "size-settings.toml"


@dataclass(frozen=True)
class SizeNames:
    """Every family's option keys, short flags (as written, with the dash) and phrases (word
    tuples, lower case, longest first)."""

    keys: dict[str, str]
    flags: dict[str, str]
    phrases: tuple[tuple[tuple[str, ...], str], ...]
    #: Nouns a size written before them names the quantity of ("a 2.2 GB .onnx file").
    nouns: dict[str, str]


@functools.cache
def size_names() -> SizeNames:
    with DATA.open("rb") as handle:
        table = tomllib.load(handle)
    keys: dict[str, str] = {}
    flags: dict[str, str] = {}
    phrases: list[tuple[tuple[str, ...], str]] = []
    nouns: dict[str, str] = {}
    for item in table.get("setting", []):
        family = str(item["family"])
        keys.update({option_key(str(name)): family for name in item.get("names", [])})
        flags.update({str(flag): family for flag in item.get("flags", [])})
        phrases += [(tuple(str(p).lower().split()), family) for p in item.get("phrases", [])]
        nouns.update({str(noun).lower(): family for noun in item.get("nouns", [])})
    phrases.sort(key=lambda pair: -len(pair[0]))
    return SizeNames(keys, flags, tuple(phrases), nouns)


def family_of(name: str) -> str | None:
    """The quantity an option ``name`` sets (its last dotted part counts:
    ``tokenizer.model_max_length``), or None."""
    key = option_key(name)
    names = size_names()
    return names.keys.get(key) or names.keys.get(key.rpartition(".")[2])
