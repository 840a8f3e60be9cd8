"""The attention projections' name families a LoRA recipe uses: which module names spell
one role of query, key and value (separate) and which spell several or are a model type's
one default target (fused), from ``rca/knowledge/lora-target-modules.toml`` (PEFT's mapping
of model types to default targets, Meta's role prefix; sources in the file).

Its own module, so that both the module-name premise (:mod:`.module_names`, which names in
an answer are module names) and the layout reading (:mod:`.projection_layout`, which reads
the incident's modules through :mod:`.module_names`) use it without importing each other.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ingest.linear_regex import compile as linear

__all__ = ["DATA", "Families", "load_families"]

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "lora-target-modules.toml"
_PARTS = linear(r"[A-Za-z]+")


@dataclass(frozen=True)
class Families:
    """The attention roles' words, and the names a model type's default targets alone."""

    roles: dict[str, str]  # each role's word or letter (lowercase) -> the role
    fused: frozenset[str]  # lowercase
    prefixes: tuple[str, ...] = ()  # lowercase, put before role letters ("w" of "wq")
    #: PEFT's default targets per model type (type lowercase, as the mapping names it)
    defaults: dict[str, tuple[str, ...]] = field(default_factory=dict)

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
    defaults = {
        str(kind).lower(): tuple(str(name) for name in names)
        for kind, names in data.get("defaults", {}).items()
    }
    return Families(roles, fused, prefixes, defaults)
