"""A suggestion that adds an axis to an input the message shows has one axis too many.

When :mod:`rca.suggestion.rank_direction` reads ``input-has-extra-axis`` ("expected ndim=4,
found ndim=5"; a conv2d given ``[1, 6, 6, 512, 512]``; ONNX Runtime's "Got: 5 Expected: 4"),
"add the batch axis (``np.expand_dims(x, 0)``)", ``x.unsqueeze(0)``, ``x[None, ...]`` or
``x[..., np.newaxis]`` make the mismatch worse. Runbook steps that add an axis carry the fact
in ``unless``; this check catches the same action in any wording, from any runbook or an
LLM, so validation fails it whoever wrote it.

An action that also removes an axis (``squeeze``, "drop the extra dimension") is not failed:
it names the way out too ("squeeze the extra axis instead of ``unsqueeze``"). Linear time:
RE2 (:mod:`ingest.linear_regex`) over at most :data:`MAX_SCAN_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.rank_direction import EXTRA_AXIS

__all__ = ["added_axis_violations", "adds_axis", "removes_axis"]

_ADDS_CODE = linear(
    r"expand_dims|\bunsqueeze_?\b|\bnewaxis\b|\[\s*None\s*[,\]]|\[\s*(?:\.\.\.|:)\s*,\s*None\s*\]"
    r"|\[\s*:\s*,\s*None\s*,"
)
_ADDS_PROSE = linear(
    r"\b(?:add|adding|adds|insert|inserting|prepend|append)\s+(?:an?\s+|the\s+|one\s+)?"
    r"(?:(?:new|missing|leading|trailing|extra|singleton|dummy|batch|channel|channels|feature"
    r"|features|time|timestep|sample|color|colour|depth|grayscale)[\s/]+){0,3}"
    r"(?:axis|axes|dimension|dimensions|dim)\b",
    ignore_case=True,
)
_REMOVES = linear(
    r"\bsqueeze\b|\b(?:remove|removing|drop|dropping|delete|strip|collapse|flatten)\s+"
    r"(?:the\s+|an?\s+|that\s+|this\s+)?(?:(?:extra|redundant|additional|superfluous|spurious"
    r"|leading|outer|singleton|second|duplicate|batch)\s+){0,3}(?:axis|dimension|dim)\b",
    ignore_case=True,
)


def adds_axis(action: str) -> bool:
    """Whether ``action`` adds an axis to a tensor, in code or in words."""
    text = (action or "")[:MAX_SCAN_CHARS]
    return bool(_ADDS_CODE.search(text) or _ADDS_PROSE.search(text))


def removes_axis(action: str) -> bool:
    """Whether ``action`` removes an axis (``squeeze``, "drop the extra dimension")."""
    return bool(_REMOVES.search((action or "")[:MAX_SCAN_CHARS]))


def added_axis_violations(action: str, facts: Iterable[str]) -> list[str]:
    """Why adding an axis cannot fix this incident (empty: it may, or the action adds none)."""
    if EXTRA_AXIS not in set(facts) or not adds_axis(action) or removes_axis(action):
        return []
    return [
        "do not add an axis: the message shows the input already has more dimensions than the"
        " layer accepts; remove the extra one (squeeze it, or stop batching it twice) or use"
        " the layer made for that rank"
    ]
