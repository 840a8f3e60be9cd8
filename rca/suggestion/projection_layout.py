"""Whether the model computes attention's query, key and value in one fused module or in
separate ones, read from the module names the incident shows: the facts
``model-attention-fused`` / ``model-attention-separate`` and the placeholders
``{modules-not-found}``, ``{shown-fused-projection}``, ``{shown-separate-projections}``.

A LoRA ``target_modules`` list written for one layout matches nothing in the other: LLaMA's
``q_proj``/``v_proj`` on BLOOM (``query_key_value``), or ``query_key_value`` on LLaMA. Which
way the fix goes comes from the incident's own names, never from a step's order or words:

the model's printed modules (:func:`.module_names.read_shown_modules`), when they hold a
fused projection (fused) or separate projections of at least two roles (separate). The names
PEFT's message lists as not found say no layout: ``q_proj``/``v_proj`` missing fits a fused
model (BLOOM) as well as one that keeps them apart under other names (BERT's ``query``, T5's
``q``, DistilBERT's ``q_lin``), so without a printed model there is no fact, only the
placeholder ``{modules-not-found}`` a step names as the names not to use.

A name is fused when a model type's default LoRA targets in PEFT's mapping are that one
module (``c_attn``, ``Wqkv``), or when its parts spell two or more roles (``qkv_proj``,
``query_key_value``); separate when they spell exactly one (``q_proj``, ``value``, ``q_lin``,
Meta's ``wq``: role letters after a prefix the data lists). The roles' words, the prefixes
and the mapping are data, with their source:
``rca/knowledge/lora-target-modules.toml``.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ingest.linear_regex import compile as linear
from rca.suggestion.module_names import ShownModules, read_shown_modules

__all__ = [
    "LAYOUT_FACTS",
    "VALUE_NAMES",
    "Families",
    "layout_facts",
    "layout_values",
    "load_families",
    "projection_layout",
]

LAYOUT_FACTS = frozenset({"model-attention-fused", "model-attention-separate"})
#: The step placeholders this module gives values for (:mod:`rca.suggestion.step_values`).
VALUE_NAMES = frozenset(
    {"modules-not-found", "shown-fused-projection", "shown-separate-projections"}
)
DATA = Path(__file__).resolve().parent.parent / "knowledge" / "lora-target-modules.toml"
_PARTS = linear(r"[A-Za-z]+")
_MAX_NAMES = 12


@dataclass(frozen=True)
class Families:
    """The attention roles' words, and the names a model type's default targets alone."""

    roles: dict[str, str]  # each role's word or letter (lowercase) -> the role
    fused: frozenset[str]  # lowercase
    prefixes: tuple[str, ...] = ()  # lowercase, put before role letters ("w" of "wq")

    def _letters(self, part: str) -> list[str]:
        """The roles of ``part`` when it is role letters, each once ("qkv", "kv", "q")."""
        if len(set(part)) == len(part) and set(part) <= self.roles.keys():
            return [self.roles[char] for char in part]
        return []

    def roles_of(self, name: str) -> frozenset[str]:
        """The roles the leaf of ``name`` spells, one part at a time."""
        found: set[str] = set()
        for match in _PARTS.finditer(name.rsplit(".", 1)[-1].lower()[:120]):
            part = match.group(0)
            if part in self.roles:
                found.add(self.roles[part])
            elif len(part) > 1 and (letters := self._letters(part)):
                found.update(letters)  # "qkv", "kv"
            else:  # "wq", "wqkv": role letters after a prefix
                rest = [part[len(p) :] for p in self.prefixes if part.startswith(p)]
                found.update(role for r in rest if r for role in self._letters(r))
        return frozenset(found)

    def kind(self, name: str) -> str:
        """``fused``, ``separate`` or "" (the name says neither: ``c_proj``, ``fc1``)."""
        leaf = name.rsplit(".", 1)[-1]
        roles = self.roles_of(leaf)
        if leaf.lower() in self.fused or len(roles) > 1:
            return "fused"
        return "separate" if roles else ""


@functools.cache
def load_families(path: Path = DATA) -> Families:
    """The families in ``path``: its roles, and the names a model type's defaults give alone."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    roles = {
        str(word).lower(): str(role)
        for role, words in data.get("roles", {}).items()
        for word in words
    }
    lists = [list(names) for names in data.get("defaults", {}).values()]
    lists += [list(entry.get("names", [])) for entry in data.get("also", {}).values()]
    fused = frozenset(str(names[0]).lower() for names in lists if len(names) == 1)
    prefixes = tuple(str(p).lower() for p in data.get("role_prefixes", []))
    return Families(roles, fused, prefixes)


@dataclass(frozen=True)
class Layout:
    """The layout the incident shows (``fused``, ``separate`` or ""), and the names read."""

    kind: str = ""
    not_found: tuple[str, ...] = ()
    shown_fused: tuple[str, ...] = ()
    shown_separate: tuple[str, ...] = ()


def _role_order(families: Families, name: str) -> tuple[int, str]:
    order = list(dict.fromkeys(families.roles.values()))  # as the data lists them
    roles = families.roles_of(name)
    return (min((order.index(r) for r in roles), default=len(order)), name)


def projection_layout(modules: ShownModules, families: Families | None = None) -> Layout:
    """Which layout ``modules`` show: only the printed model says it (module docstring)."""
    families = families or load_families()
    not_found = tuple(m for m, whole in zip(modules.missing, modules.suffix, strict=True) if whole)
    shown = sorted(modules.shown)
    fused = tuple(n for n in shown if families.kind(n) == "fused")
    separate = tuple(
        sorted(
            (n for n in shown if families.kind(n) == "separate"),
            key=lambda n: _role_order(families, n),
        )
    )
    roles = {role for name in separate for role in families.roles_of(name)}
    kind = "fused" if fused else "separate" if len(roles) > 1 else ""
    return Layout(kind, not_found[:_MAX_NAMES], fused[:_MAX_NAMES], separate[:_MAX_NAMES])


def layout_facts(texts: Sequence[str]) -> set[str]:
    """``model-attention-fused`` or ``model-attention-separate``, as ``texts`` show it."""
    kind = projection_layout(read_shown_modules(texts)).kind
    return {f"model-attention-{kind}"} if kind else set()


def _listed(names: Sequence[str], last: str = ", ") -> str:
    marked = [f"`{name}`" for name in names]
    return last.join([", ".join(marked[:-1]), *marked[-1:]] if marked[:-1] else marked)


def layout_values(texts: Sequence[str]) -> dict[str, str]:
    """The placeholders' values: the names PEFT lists as not found, and the printed model's
    fused projection or separate ones (each only when the incident shows it)."""
    layout = projection_layout(read_shown_modules(texts))
    values = {
        # one clause, so the "instead of" before it turns down every name in it
        "modules-not-found": _listed(layout.not_found, " or "),
        "shown-fused-projection": _listed(layout.shown_fused),
        "shown-separate-projections": _listed(layout.shown_separate),
    }
    return {name: value for name, value in values.items() if value}
