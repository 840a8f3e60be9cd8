"""Whether a matmul's shapes support changing the layer's input width, or say the input is wrong.

"mat1 and mat2 shapes cannot be multiplied (BxK1 and K2xN)" has two readings: the layer was
built for another width (set its ``in_features`` to K1), or the input is not the features the
layer was built for (fix the input). Resizing is right only in the first. The shapes alone
tell some cases of the second apart:

- ``features-folded-into-rows``: the input has one column (K1 == 1) while the layer takes
  K2 >= 2 values, and its row count B is a whole multiple of K2 (B >= K2). Each sample's K2
  values are there, spread over the row axis (size-one axes a pooling left on the tensor, a
  ``view`` that moved the channels into the batch). A one-input layer would "work" and treat
  every value as its own sample; the fix is to flatten keeping the batch axis.
- ``input-smaller-than-one-row``: the whole input holds fewer values than one row of the
  layer (B x K1 < K2), and the layer is at least :data:`MUCH_WIDER` times its width. That is
  not the same features at another resolution: it is another tensor, or one read along the
  wrong axis, handed to a layer whose width its weights fix.

What shows the layer is the user's to resize is ``layer-built-in-user-code``: one of the
user's own frames (``in_app``), or a line of the message or logs, constructs a linear or dense
layer (``model.head = nn.Linear(1024, 5)``), or the innermost frame
outside the tensor framework's own files is a model's ``forward``/``call`` in the user's
files. A loader is not needed to rule resizing out: ``layer-resize-unsupported`` holds when
the input is folded into rows (a rearrangement: whoever built the layer), or when it is
smaller than one row and nothing shows the user built the layer. Steps that change the
layer's width name that fact in ``unless``; which steps fit instead is runbook data.

``layer-origin-not-shown`` holds when a matmul's shapes are read and nothing shows the user
built the layer: a message with no traceback, or frames that run the layer from a library's
own model (a pipeline, a loaded checkpoint's architecture). Resizing is then a guess that
discards trained weights whenever the layer is not the user's, while "load the components
made for this architecture" or "check which tensor reaches the layer" harm nothing; so the
offline provider's resize steps carry it in ``unless``. Alone it is not a harm rule for an
answer: an LLM that says "if you built this layer, set ``in_features``" may be right, and the
incident cannot show it is wrong. With trained weights shown (``pretrained-weights-loaded``,
``model-already-quantized``) it is: the layer then holds weights a resize discards, and
:mod:`rca.suggestion.checks.layer_resize` fails any answer that resizes it.
:mod:`rca.suggestion.checks.layer_resize` applies the same rule to any suggestion's words,
offline or LLM.

Only shapes whose parse is unambiguous are read: a matmul diff (``ingest.parsing.shapes``)
with a two-dimensional input and a known inner width. The thresholds are not fitted on cases.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ingest.linear_regex import compile as linear
from ingest.parsing.shape_ops import op_kind
from ingest.parsing.shapes import ShapeDiff

__all__ = [
    "BUILT",
    "FOLDED",
    "MUCH_WIDER",
    "ORIGIN_NOT_SHOWN",
    "SMALLER",
    "UNSUPPORTED",
    "derived_dims",
    "layer_width_facts",
    "matmul_dims",
    "shape_facts",
]

FOLDED = "features-folded-into-rows"
SMALLER = "input-smaller-than-one-row"
BUILT = "layer-built-in-user-code"
UNSUPPORTED = "layer-resize-unsupported"
ORIGIN_NOT_SHOWN = "layer-origin-not-shown"

MUCH_WIDER = 8
"""How many times wider than the input's rows a layer must be, besides the whole input holding
less than one of its rows, to read the input as another tensor: a resized layer would drop at
least seven in eight of its input columns. A small excess (an input of 3 features for a layer
of 4) stays a feature-count mismatch that resizing may fix. Not fitted on cases."""

_MAX_FRAMES = 200
_MAX_TEXTS = 64
_MAX_TEXT = 20_000
_MAX_LINES = 400
#: The tensor framework's own files: the frames between the user's code and the failing matmul.
_FRAMEWORK_PATH = linear(r"(?:^|/)(?:torch|tensorflow|keras|tf_keras|jax|jaxlib|flax|haiku)/")
#: A user's code constructing a linear or dense layer (``nn.Linear(512, 10)``,
#: ``layers.Dense(64)``, ``[Dense(10), ...]``), not a printed module (``(fc): Linear(...)``).
_BUILDS_LAYER = linear(r"(?:\bnn\.|\blayers\.|[=\[(,]\s*)(?:Lazy)?(?:Linear|Dense)\s*\(")
#: A model's own method: the module whose layer failed is defined in that file.
_MODEL_METHODS = frozenset({"forward", "call", "__call__"})


def _size(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def matmul_dims(diff: ShapeDiff) -> tuple[int, int, int] | None:
    """``(B, K1, K2)`` of a matmul diff: the input's rows and width, the layer's width."""
    if op_kind(diff.get("op")) != "matmul":
        return None
    expected, actual = list(diff.get("expected") or []), list(diff.get("actual") or [])
    if len(expected) != 2 or len(actual) != 2:
        return None
    rows, width, need = _size(actual[0]), _size(actual[1]), _size(expected[1])
    if rows is None or width is None or need is None or width == need:
        return None
    return rows, width, need


def shape_facts(rows: int, width: int, need: int) -> set[str]:
    """:data:`FOLDED` or :data:`SMALLER` for an input of ``rows`` x ``width`` into a layer
    of width ``need`` (or neither)."""
    if width == 1 and need >= 2 and rows >= need and rows % need == 0:
        return {FOLDED}
    if rows * width < need and need >= MUCH_WIDER * width:
        return {SMALLER}
    return set()


def derived_dims(diffs: Iterable[ShapeDiff]) -> set[int]:
    """Sizes the facts above derive from the shapes, which a fix may name: the batch of a
    folded input (``rows // need``: "(1600x1 and 100x256)" is 16 samples of 100 values, and
    the fix reshapes it to (16, 100))."""
    sizes: set[int] = set()
    for diff in list(diffs)[:2]:
        dims = matmul_dims(diff)
        if dims and FOLDED in shape_facts(*dims):
            sizes.add(dims[0] // dims[2])
    return sizes


def _built_by_user(frames: Sequence[Any]) -> bool:
    """Whether the user's own frames construct a layer, or the innermost frame outside the
    framework's files is a model method in the user's files."""
    frames = list(frames)[-_MAX_FRAMES:]
    if any(
        frame.get("in_app") and _BUILDS_LAYER.search(str(frame.get("context_line") or ""))
        for frame in frames
    ):
        return True
    for frame in reversed(frames):
        path = str(frame.get("filename") or "").replace("\\", "/")
        if not frame.get("in_app") and _FRAMEWORK_PATH.search(path):
            continue
        return bool(frame.get("in_app")) and str(frame.get("function") or "") in _MODEL_METHODS
    return False


def _builds_in_text(texts: Sequence[str]) -> bool:
    """Whether a line of ``texts`` (the message, log lines) is code constructing a linear or
    dense layer (``model.head = nn.Linear(1024, 5)`` pasted or logged): the user's own."""
    return any(
        _BUILDS_LAYER.search(line)
        for text in list(texts)[:_MAX_TEXTS]
        for line in text[:_MAX_TEXT].splitlines()[:_MAX_LINES]
    )


def layer_width_facts(
    diffs: Iterable[ShapeDiff], frames: Sequence[Any] = (), texts: Sequence[str] = ()
) -> set[str]:
    """The facts above that the incident's first two shape diffs, its frames and its texts
    (message and log lines) show."""
    facts: set[str] = set()
    shapes = [dims for diff in list(diffs)[:2] if (dims := matmul_dims(diff))]
    for dims in shapes:
        facts |= shape_facts(*dims)
    if shapes:
        built = _built_by_user(frames) or _builds_in_text(texts)
        facts.add(BUILT if built else ORIGIN_NOT_SHOWN)
    if FOLDED in facts or (SMALLER in facts and BUILT not in facts):
        facts.add(UNSUPPORTED)
    return facts
