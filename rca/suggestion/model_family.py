"""The model type an incident names, and the attention layout PEFT's defaults give it.

"Target modules ['q_proj', 'v_proj'] not found" with ``--model_name_or_path
/models/chatglm3-6b`` in the command line: the names PEFT did not find fit a fused model as
well as one that keeps its projections apart under other names, but the model is named, and
PEFT's own mapping of model types to default LoRA targets
(``rca/knowledge/lora-target-modules.toml``) says ChatGLM computes query, key and value in one
module, ``query_key_value``. So a named model of a type the mapping knows shows the layout as
a printed model does (:mod:`.projection_layout`).

A model is read only where the text names one: a model argument (``--model_name_or_path``,
``--model``, ``model_id=``, ...) or ``from_pretrained("...")``. A type matches when the name's
parts (split at ``/ . _ -``) hold the type's parts in a row, the last one possibly followed
by a version number ("chatglm3" is ChatGLM, "gpt-neox-20b" GPT-NeoX, "neox" is not GPT-Neo).
Names that match types of both layouts ("/opt/models/chatglm2-6b": OPT and ChatGLM) say
nothing. Patterns are RE2 over capped texts, a bounded number of matches each: linear.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

from ingest.linear_regex import compile as linear
from rca.suggestion.lora_families import Families, load_families

__all__ = ["named_layout", "named_models", "named_types"]

_MAX_TEXT = 20_000
_MAX_TEXTS = 64
_MAX_MATCHES = 16
_MAX_PARTS = 24
_MODEL_ARG = linear(
    r"(?:--(?:model|base[_-]model|model[_-]name[_-]or[_-]path|model[_-]name|model[_-]id"
    r"|model[_-]path|pretrained[_-]model[_-]name[_-]or[_-]path)"
    r"|\b(?:model_name_or_path|pretrained_model_name_or_path|base_model_name_or_path|model_id"
    r"|model_name))[\"']?\s*[=: ]\s*[\"']?([\w./-]{1,200})",
    ignore_case=True,
)
_FROM_PRETRAINED = linear(r"from_pretrained\(\s*(?:\w+\s*=\s*)?[\"']([\w./-]{1,200})[\"']")
_PART = linear(r"[A-Za-z0-9]+")


def named_models(texts: Iterable[str]) -> list[str]:
    """The model names or paths ``texts`` give as a model argument or to ``from_pretrained``."""
    names: list[str] = []
    for text in islice(texts, _MAX_TEXTS):
        capped = (text or "")[:_MAX_TEXT]
        for pattern in (_MODEL_ARG, _FROM_PRETRAINED):
            names.extend(m.group(1) for m in islice(pattern.finditer(capped), _MAX_MATCHES))
    return list(dict.fromkeys(names))


def _parts(text: str) -> list[str]:
    return [m.group(0).lower() for m in islice(_PART.finditer(text), _MAX_PARTS)]


def _holds(parts: list[str], kind: list[str]) -> bool:
    """Whether ``parts`` hold ``kind``'s parts in a row, its last one maybe with a version."""
    n = len(kind)
    for start in range(len(parts) - n + 1):
        window = parts[start : start + n]
        last, want = window[-1], kind[-1]
        tail = last[len(want) :]
        if window[:-1] == kind[:-1] and last.startswith(want) and (not tail or tail.isdigit()):
            return True
    return False


def named_types(texts: Iterable[str], families: Families | None = None) -> set[str]:
    """The model types of PEFT's mapping that the models ``texts`` name are of."""
    families = families or load_families()
    found: set[str] = set()
    for name in named_models(texts):
        parts = _parts(name)
        found.update(kind for kind in families.defaults if _holds(parts, _parts(kind)))
    return found


def named_layout(texts: Iterable[str], families: Families | None = None) -> str:
    """``fused`` or ``separate`` when every named model type's default targets say the same
    (one fused module; or separate modules of two roles or more), else ""."""
    families = families or load_families()
    kinds = set()
    for kind in named_types(texts, families):
        names = families.defaults[kind]
        roles = {role for name in names for role in families.roles_of(name)}
        if len(names) == 1 and families.kind(names[0]) == "fused":
            kinds.add("fused")
        elif all(families.kind(n) == "separate" for n in names) and len(roles) > 1:
            kinds.add("separate")
        else:
            kinds.add("")
    return kinds.pop() if len(kinds) == 1 else ""
