"""A suggestion that changes a layer's input width when the shapes say the input is wrong.

When :mod:`rca.suggestion.layer_width` reads ``layer-resize-unsupported`` from a matmul's
shapes (the input's values folded into rows, or an input smaller than one row of a much wider
layer that nothing shows the user built), "set ``in_features`` to 1", "use ``nn.LazyLinear``",
"replace ``nn.Linear(100, 256)`` with ``nn.Linear(1, 256)``" or "remove the stale
``input_dim``" make the error go away and the model wrong. Runbook steps that resize carry the
fact in ``unless``; this check catches the same action in any wording, from any runbook or
an LLM, so validation fails it whoever wrote it.

The same holds for a layer with trained weights: when the incident loads trained weights
(``pretrained-weights-loaded``) or a quantized model (``model-already-quantized``) and the
matmul's shapes are read with nothing showing the user's code built the layer
(``layer-origin-not-shown``), "set ``in_features=16`` on the intermediate Linear layer"
throws away the weights the layer was trained with, whatever the shapes say. A user who loads
a pretrained backbone and builds a new head in their own code (``layer-built-in-user-code``)
may resize that head.

An action changes the width when its imperative verb changes something (set, change,
resize, remove, ...) and it names the layer's input width (``in_features``, ``input_dim``,
``input_shape``, ``input_size``, a lazy layer, a ``Linear(<n>, ...)`` constructor), or when
its object is a layer it resizes or rebuilds, or it puts a new layer constructor in a layer's
place in any wording (``model.fc = nn.Linear(512, 10)``, "swap the head for
``nn.Linear(768, 2)``"). One that names the layer's own width and not the
input's (asking for an input of that width), or names the width only in a clause it turns
down ("instead of setting ``in_features``"), does not change it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from ingest.parsing.shapes import ShapeDiff
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.layer_width import (
    FOLDED,
    ORIGIN_NOT_SHOWN,
    UNSUPPORTED,
    matmul_dims,
    shape_facts,
)
from rca.suggestion.negated_clauses import turned_down

__all__ = ["changes_layer_width", "resize_violations"]

#: Imperative verbs that change what they name (``Set in_features``, ``Remove input_dim``).
_CHANGE_VERBS = frozenset(
    {
        "set", "change", "resize", "update", "adjust", "reduce", "shrink", "increase",
        "decrease", "lower", "replace", "modify", "edit", "redefine", "rebuild", "recreate",
        "reinitialize", "reinitialise", "remove", "drop", "omit", "use", "switch", "swap",
        "substitute",
    }
)  # fmt: skip
#: An action whose object is a layer it resizes or rebuilds ("Resize the first linear layer"),
#: not one that resizes the inputs ("Resize inputs to the resolution ... before the classifier").
_RESIZES_LAYER = linear(
    r"^[\s`*_\"']*(?:resize|shrink|rebuild|recreate|redefine)\s+(?:the\s+|a\s+|your\s+)?"
    r"(?:[\w`'.]+\s+){0,2}?(?:layer|linear|dense|classifier|head|fc\d*)\b",
    ignore_case=True,
)
_WIDTH_NAMES = linear(
    r"\bin_features\b|\binput_(?:dim|shape|size)\b|\blazy(?:linear|dense)\b"
    r"|\blinear\(\s*(?:in_features\s*=\s*)?\d|\binput features?\b"
    r"|\b(?:linear|layer|dense)(?:'s)? input (?:size|width)\b",
    ignore_case=True,
)
#: "Make the first linear layer accept 4096 features": the layer is made to take another width.
_LAYER_TAKES = linear(
    r"^[\s`*_\"']*(?:make|let|have)\s+(?:the\s+|a\s+|your\s+)?(?:[\w`'.]+\s+){0,2}?"
    r"(?:layer|linear|dense)\b[^.;\n]{0,20}?\b(?:accept|take)s?\s+\d+",
    ignore_case=True,
)
#: A layer constructor put in a layer's place, wherever the action's verb stands: an
#: assignment (``model.fc = nn.Linear(512, 10)``), "a new ``nn.Linear(100, 5)``", "swap the
#: head for ``nn.Linear(768, 2)``".
_REBUILT = linear(
    r"(?:=\s*|\bnew\s+|\b(?:swap|substitute)\b[^.;\n]{0,80}?)[`'\"]?(?:\w+\.){0,3}"
    r"(?:Lazy)?(?:Linear|Dense)\s*\(\s*(?:in_features\s*=\s*)?\d",
    ignore_case=True,
)
#: Facts that say the layers' weights were trained (or packed) elsewhere, with what a resize loses.
_TRAINED = {
    "pretrained-weights-loaded": "the incident loads trained weights",
    "model-already-quantized": "the model is loaded quantized",
}
_NUMBER = linear(r"\b\d+\b")
_FIRST_WORD = linear(r"^[\s`*_\"']*([A-Za-z-]+)")


def changes_layer_width(action: str) -> bool:
    """Whether ``action`` changes a layer's input width (see the module docstring)."""
    text = (action or "")[:MAX_SCAN_CHARS]
    match = _FIRST_WORD.search(text)
    verb = match.group(1).lower() if match else ""
    # A width named only in a clause the action turns down is not changed: "use matching
    # model files instead of setting `in_features=4096`".
    said = text
    for start, end in turned_down(text):
        said = said[:start] + " " * (end - start) + said[end:]
    if verb in _CHANGE_VERBS and _WIDTH_NAMES.search(said):
        return True
    if _REBUILT.search(said):
        return True
    return bool(_RESIZES_LAYER.search(text) or _LAYER_TAKES.search(text))


def _why(fact: str, rows: int, width: int, need: int) -> str:
    if fact == FOLDED:
        return (
            f"the input [{rows} x {width}] holds each sample's {need} values spread over its rows"
            f" ({rows} = {rows // need} x {need}): the input is mis-shaped, not the layer; flatten"
            f" or reshape it to ({rows // need}, {need}) keeping the batch axis"
        )
    return (
        f"the whole input [{rows} x {width}] holds fewer values than one {need}-wide row of the"
        " layer and nothing shows the layer is built in the user's code: it is another tensor"
        " or one read along the wrong axis; check which tensor and axis reach the layer"
    )


def resize_violations(action: str, facts: Iterable[str], diffs: Iterable[ShapeDiff]) -> list[str]:
    """Why changing the layer's input width cannot fix this incident (empty: it may)."""
    facts = set(facts)
    if not facts & {UNSUPPORTED, ORIGIN_NOT_SHOWN} or not changes_layer_width(action):
        return []
    trained = [why for fact, why in _TRAINED.items() if fact in facts]
    if ORIGIN_NOT_SHOWN in facts and trained:
        return [
            f"do not change the layer's input width: {' and '.join(trained)} and nothing shows"
            " the layer is built in the user's code, so resizing it discards its trained"
            " weights; give the layer the input it was trained on (check which tensor and"
            " axis reach it) or load the components made for this architecture"
        ]
    if UNSUPPORTED not in facts:
        return []
    numbers = {int(m.group(0)) for m in _NUMBER.finditer((action or "")[:MAX_SCAN_CHARS])}
    for diff in list(diffs)[:2]:
        dims = matmul_dims(diff)
        found = shape_facts(*dims) if dims else set()
        if not dims or not found:
            continue
        rows, width, need = dims
        if need in numbers and width not in numbers:
            return []  # asks for an input of the layer's own width
        why = _why(next(iter(found)), rows, width, need)
        return [f"do not change the layer's input width: {why}"]
    return []
