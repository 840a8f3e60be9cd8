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
placeholder ``{modules-not-found}`` a step names as the names not to use; and a step (or a
suggestion restating it) that names a fused projection to use then guesses the layout: the
step-relative fact ``attention-layout-guessed`` (:func:`guessed_layout`) rules it out.

A name is fused when a model type's default LoRA targets in PEFT's mapping are that one
module (``c_attn``, ``Wqkv``), or when its parts spell two or more roles (``qkv_proj``,
``query_key_value``); separate when they spell exactly one (``q_proj``, ``value``, ``q_lin``,
Meta's ``wq``: role letters after a prefix the data lists). The roles' words, the prefixes
and the mapping are data, with their source:
``rca/knowledge/lora-target-modules.toml``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ingest.linear_regex import compile as linear
from rca.suggestion.lora_families import Families, load_families
from rca.suggestion.model_family import named_layout, named_types
from rca.suggestion.module_names import ShownModules, module_names_to_use, read_shown_modules
from rca.suggestion.negated_clauses import said_parts

__all__ = [
    "GUESSED",
    "LAYOUT_FACTS",
    "VALUE_NAMES",
    "Families",
    "layout_facts",
    "guessed_layout",
    "layout_values",
    "load_families",
    "projection_layout",
]

LAYOUT_FACTS = frozenset({"model-attention-fused", "model-attention-separate"})
#: The step placeholders this module gives values for (:mod:`rca.suggestion.step_values`).
VALUE_NAMES = frozenset(
    {"modules-not-found", "shown-fused-projection", "shown-separate-projections"}
)
_MAX_NAMES = 12
#: The step-relative fact (:mod:`.step_relative`) of a wording that states a fused layout
#: no printed model shows.
GUESSED = "attention-layout-guessed"
_FUSED = linear(r"\bfused\b", ignore_case=True)


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


def layout_facts(texts: Sequence[str] | None) -> set[str]:
    """``model-attention-fused`` or ``model-attention-separate``, as ``texts`` show it: a
    printed model, else a named model of a type PEFT's mapping knows (:mod:`.model_family`);
    no texts, ``None``, show none."""
    texts = texts or ()
    kind = projection_layout(read_shown_modules(texts)).kind or named_layout(texts)
    return {f"model-attention-{kind}"} if kind else set()


def _listed(names: Sequence[str], last: str = ", ") -> str:
    marked = [f"`{name}`" for name in names]
    return last.join([", ".join(marked[:-1]), *marked[-1:]] if marked[:-1] else marked)


def layout_values(texts: Sequence[str]) -> dict[str, str]:
    """The placeholders' values: the names PEFT lists as not found, and the printed model's
    fused projection or separate ones, else those PEFT's defaults give the named model's type
    (each only when the incident shows it)."""
    layout = projection_layout(read_shown_modules(texts))
    fused, separate = layout.shown_fused, layout.shown_separate
    if not layout.kind and (kind := named_layout(texts)):  # PEFT's defaults for the named type
        families = load_families()
        names = [n for t in sorted(named_types(texts, families)) for n in families.defaults[t]]
        names = sorted(dict.fromkeys(names), key=lambda n: _role_order(families, n))
        fused, separate = (tuple(names), ()) if kind == "fused" else ((), tuple(names))
    values = {
        # one clause, so the "instead of" before it turns down every name in it
        "modules-not-found": _listed(layout.not_found, " or "),
        "shown-fused-projection": _listed(fused),
        "shown-separate-projections": _listed(separate),
    }
    return {name: value for name, value in values.items() if value}


def guessed_layout(texts: Iterable[str], modules: ShownModules) -> str:
    """Why the first of ``texts`` that names modules to use, or says a fused projection
    outside what it turns down, states a fused layout while PEFT's names not found show and
    no printed model shows the layout ("" when it does not, or the incident shows either)."""
    layout = projection_layout(modules)
    if layout.kind or not layout.not_found:
        return ""
    families = load_families()
    for text in texts:
        names = module_names_to_use(text, modules) if text else []
        fused = [name for name in names if families.kind(name) == "fused"]
        if fused or (not names and any(_FUSED.search(p) for p in said_parts(text))):
            named = f" ({', '.join(fused[:3])})" if fused else ""
            return (
                f"it states a fused attention projection{named}, which no printed model shows:"
                " the names PEFT did not find fit either layout"
            )
        if names:
            return ""
    return ""
