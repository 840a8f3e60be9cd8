"""A suggestion that adds a leading (batch) axis to an input that already has its batch axis.

When :mod:`rca.suggestion.axis_position` reads ``batch-axis-present`` (Keras "expected
min_ndim=4, found ndim=3. Full shape received: (None, 28, 28)", "expected shape=(None, 28,
28, 1), found shape=(None, 28, 28)", a PyTorch conv with weight ``[32, 1, 3, 3]`` given
``[64, 28, 28]``), "add the batch axis" (``np.expand_dims(x, 0)``, ``x.unsqueeze(0)``,
``x[None, ...]``, ``tf.expand_dims(x, axis=0)``) gives ``(1, None, 28, 28)``: the rank
matches and every axis is off by one place. Runbook steps that add the batch axis carry the
fact in ``unless``; this check catches the same action in any wording, from any runbook or
an LLM, so validation fails it whoever wrote it.

An action that also adds the channel/feature axis at its place (``x[..., None]``,
``expand_dims(x, -1)``, ``unsqueeze(1)``, "add the channel dimension") or reshapes to the
full shape is not failed: it names the way out too. Linear time: RE2
(:mod:`ingest.linear_regex`) over at most :data:`MAX_SCAN_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.suggestion.axis_position import BATCH_PRESENT
from rca.suggestion.checks import MAX_SCAN_CHARS

__all__ = ["adds_leading_axis", "adds_trailing_axis", "leading_axis_violations"]

#: A new axis at position 0: expand_dims(x, 0) / (x, axis=0), unsqueeze(0), x[None, ...],
#: x[np.newaxis, ...], x[None] and x[np.newaxis] (a new first axis too).
_LEADING_CODE = linear(
    r"expand_dims\(\s*[^,()\n]{1,80},\s*(?:axis\s*=\s*)?0\s*\)"
    r"|\bunsqueeze_?\(\s*(?:dim\s*=\s*)?0\s*\)"
    r"|\[\s*(?:None|np\.newaxis|tf\.newaxis|jnp\.newaxis|newaxis)\s*(?:,\s*(?:\.\.\.|:)[^\]\n]{0,40})?\]",
)
_LEADING_PROSE = linear(
    r"\b(?:add|adding|adds|insert|inserting|prepend|prepending|restore|include)\s+"
    r"(?:an?\s+|the\s+|one\s+)?(?:(?:missing|new|extra|leading|outer|dummy|singleton)\s+)*"
    r"batch\s+(?:axis|axes|dimension|dimensions|dim|size\s+of\s+1)\b"
    r"|\b(?:add|adding|insert|prepend)\s+(?:an?\s+|the\s+|one\s+)?(?:new\s+)?leading\s+"
    r"(?:axis|dimension|dim)\b"
    r"|\bbatch\s+of\s+(?:one|1)\b",
    ignore_case=True,
)
#: The channel/feature axis at its own place, or the whole shape written out.
_TRAILING = linear(
    r"expand_dims\(\s*[^,()\n]{1,80},\s*(?:axis\s*=\s*)?-1\s*\)"
    r"|\bunsqueeze_?\(\s*(?:dim\s*=\s*)?(?:-1|1)\s*\)"
    r"|\[\s*(?:\.\.\.|:)\s*,\s*(?:None|np\.newaxis|tf\.newaxis|jnp\.newaxis|newaxis)\s*\]"
    r"|\[\s*:\s*,\s*(?:None|np\.newaxis|tf\.newaxis|newaxis)\s*[,\]]"
    r"|\b(?:channels?|features?|colou?r)\s+(?:axis|axes|dimension|dimensions|dim)\b",
    ignore_case=True,
)


def adds_leading_axis(action: str) -> bool:
    """Whether ``action`` adds an axis in front (the batch axis), in code or in words."""
    text = (action or "")[:MAX_SCAN_CHARS]
    return bool(_LEADING_CODE.search(text) or _LEADING_PROSE.search(text))


def adds_trailing_axis(action: str) -> bool:
    """Whether ``action`` adds (or names) the channel/feature axis at its own place."""
    return bool(_TRAILING.search((action or "")[:MAX_SCAN_CHARS]))


def leading_axis_violations(action: str, facts: Iterable[str]) -> list[str]:
    """Why adding a batch axis cannot fix this incident (empty: it may, or the action adds
    none, or it adds the channel axis too)."""
    if BATCH_PRESENT not in set(facts) or not adds_leading_axis(action):
        return []
    if adds_trailing_axis(action):
        return []
    return [
        "do not add a batch (leading) axis: the shape the message shows already has its batch"
        " axis; add the missing channel/feature axis at its place (`x[..., None]` /"
        " `expand_dims(x, -1)` channels-last, `x.unsqueeze(1)` for an (N, H, W) PyTorch batch)"
        " or reshape to the full input shape"
    ]
