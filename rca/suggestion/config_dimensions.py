"""A pretrained model's dimensions changed through its configuration to fit an input.

:mod:`.checks.layer_resize` reads a resize written as a layer's constructor (``in_features``,
``nn.Linear(1, 256)``). The same harm is written as a configuration field: "set
``max_position_embeddings=2545`` in the model config and reload the model" for a model whose
learned position table has 512 rows, "resize the encoder's hidden size from 768 to 9 in the
config". The checkpoint's tensors then no longer fit the model: ``from_pretrained`` refuses
them, or re-initialises them at random with ``ignore_mismatched_sizes``, so what made the
error go away is an untrained model. The fields that size weight tensors are data
(``rca/knowledge/model-config-dimensions.toml``, from the libraries' configuration docs); the
label count is not one (re-initialising a head is the fine-tuning path).

An answer changes one when it names the configuration (``config``) and sets the field in code
(``max_position_embeddings=2545``), writes it as ``config.json`` does
(``"max_position_embeddings": 3000``, unless it keeps it), or changes it in prose with a
changing verb ("resize the hidden size to 9"), outside a clause it turns down ("don't raise
``max_position_embeddings``"). It is a harm when the incident shows trained weights loaded
(``pretrained-weights-loaded``, ``layer-pretrained``) or the answer itself (re)loads the
model, unless it says the model is trained anew (``from_config``, "from scratch") or names
the documented way to grow rotary positions (``rope_scaling``).

Linear: RE2 patterns over a bounded answer.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.step_options import option_key, options_set_by

__all__ = ["DATA", "PRETRAINED_FACTS", "config_dimension_violations", "config_fields"]

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "model-config-dimensions.toml"
#: The facts that show the model carries trained weights (:mod:`.environment_facts`).
PRETRAINED_FACTS = frozenset({"pretrained-weights-loaded", "layer-pretrained"})
_MAX_ACTION = 2000
_CONFIG = linear(r"\bconfig(?:uration)?\b|\w+Config\b", ignore_case=True)
_LOADS = linear(
    r"\b(?:re-?load\w*|from_pretrained|pretrained|checkpoint|load(?:s|ed|ing)?)\b",
    ignore_case=True,
)
#: The answer trains the model anew, or grows rotary positions the documented way.
_TRAINED_ANEW = linear(
    r"\bfrom[_ ]config\b|\bfrom\s+scratch\b|\brope_scaling\b|\brandom(?:ly)?\s+initiali[sz]",
    ignore_case=True,
)
#: A field written as in ``config.json``: ``"max_position_embeddings": 3000``.
_JSON_FIELD = linear(
    r"(?P<kept>\b(?:keep|keeps|keeping|leave|leaves|leaving)\s+(?:the\s+|it\s+at\s+)?)?"
    r"[\"'](?P<field>[A-Za-z_][A-Za-z0-9_]{0,60})[\"']\s*:\s*-?\d",
    ignore_case=True,
)
_CHANGING = (
    r"\b(?:set|change|resize|increase|raise|reduce|lower|decrease|grow|expand|extend|shrink"
    r"|bump|update|modify|edit|make)\b"
)


@lru_cache(maxsize=1)
def config_fields() -> dict[str, tuple[str, ...]]:
    """Each field (as :func:`.step_options.option_key` spells it) with its prose words."""
    with DATA.open("rb") as handle:
        data = tomllib.load(handle)
    return {
        option_key(str(field["name"])): tuple(str(word) for word in field.get("words", ()))
        for field in data["field"]
    }


@lru_cache(maxsize=1)
def _prose() -> LinearPattern | None:
    words = sorted({w for ws in config_fields().values() for w in ws}, key=len, reverse=True)
    if not words:
        return None
    names = "|".join(word.replace("-", "[- ]").replace(" ", r"\s+") for word in words)
    return linear(rf"{_CHANGING}[^.;\n]{{0,60}}?\b(?P<field>{names})\b", ignore_case=True)


def _blanked(action: str) -> str:
    text = action[:_MAX_ACTION]
    for start, end in turned_down(text):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _changed(text: str) -> list[str]:
    fields = config_fields()
    changed = [
        option.name
        for option in options_set_by(text)
        if option.key in fields and option.how in ("set", "change") and option.value
    ]
    changed += [
        match.group("field")
        for match in _JSON_FIELD.finditer(text)
        if option_key(match.group("field")) in fields and not match.group("kept")
    ]
    prose = _prose()
    if prose is not None:
        changed += [match.group("field") for match in prose.finditer(text)]
    return list(dict.fromkeys(changed))


def config_dimension_violations(action: str, reason: str, facts: Iterable[str]) -> list[str]:
    """Why changing a configuration's dimension drops the model's trained weights (empty: the
    answer changes none, nothing shows trained weights, or it trains the model anew)."""
    text = _blanked(action or "")
    if not _CONFIG.search(text):
        return []
    changed = _changed(text)
    if not changed:
        return []
    pretrained = bool(PRETRAINED_FACTS & set(facts)) or bool(_LOADS.search(text))
    if not pretrained or _TRAINED_ANEW.search(f"{action}\n{reason}"[: _MAX_ACTION * 2]):
        return []
    return [
        f"changing {', '.join(changed)} in the configuration resizes weights the model was"
        " trained with: the checkpoint no longer fits (or is re-initialised at random); fit"
        " the input or the head to the pretrained model instead"
    ]
