"""Which axis an input lacks: the batch axis is already there, the channel axis is missing.

"Add the batch axis (``np.expand_dims(x, 0)``, ``x.unsqueeze(0)``)" is the usual fix for an
input one axis short. When the shape the message shows already has its batch axis, a new
leading axis gives ``(1, None, 28, 28)`` for a model that takes ``(None, 28, 28, 1)``: the
mismatch stays, one place over. The axis missing is the channel (feature) axis, added at
its own position (``x[..., None]`` / ``expand_dims(x, -1)`` channels-last, ``x.unsqueeze(1)``
for a PyTorch ``(N, H, W)`` batch). This module reads that, as two facts:

- :data:`BATCH_PRESENT` (``batch-axis-present``): the input has fewer axes than the
  operation takes and the shape it was given already has its batch axis. Steps that add a
  leading (batch) axis carry it in ``unless``; :mod:`rca.suggestion.checks.leading_axis`
  fails a suggestion that adds one in any wording;
- :data:`CHANNEL_MISSING` (``channel-axis-missing``): the same, with exactly one axis
  missing, so the missing one is the channel/feature axis. Steps that add it ``fit`` it.

Read from, each only when its literal is in the text:

- TF/Keras expected and found shapes (``expected shape=(None, 28, 28, 1), found
  shape=(None, 28, 28)``; ``constructed with shape (...) ... incompatible shape (...)``): the
  found shape is one shorter and lines up with the expected one less its last axis (its
  known sizes equal), not less its first; a ``None`` leading both is the batch axis both
  have, and settles a tie;
- Keras' ``expected min_ndim=4, found ndim=3. Full shape received: (None, 28, 28)`` (also
  ``[None, 28, 28]``): Keras writes the batch axis as a leading ``None``, so a found shape
  that opens with ``None`` and has a known size after it already has its batch axis;
- PyTorch convolutions (``weight of size [32, 1, 3, 3], expected input[64, 28, 28] to have
  1 channels, but got 64 channels``; ``Expected 4-dimensional input for 4-dimensional weight
  [64, 1, 4, 4], but got 3-dimensional input of size [128, 256, 256]``): an input one axis
  short of the weight whose first and last sizes are both not the weight's input channels
  is a batch of samples without their channel axis (a single image is ``[C, H, W]`` or,
  channels-last, ``[H, W, C]``: one of the two is the channel count); a new leading axis
  makes it ``[1, 64, 28, 28]``, 64 channels still;
- a message that says the channel or feature axis is missing ("missing channel dimension",
  "the channels axis is missing", "input without a channel dimension").

Two readings that disagree (one shows the leading axis missing) claim nothing; an unknown is
not a no. Linear time: RE2 (:mod:`ingest.linear_regex`) over at most :data:`_MAX_MESSAGE`
characters, each pattern tried only when its literal is present.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ingest.linear_regex import compile as linear
from ingest.parsing.shape_ops import op_kind
from ingest.parsing.shapes import ShapeDiff, parse_dims

__all__ = [
    "BATCH_PRESENT",
    "CHANNEL_MISSING",
    "axis_position_facts",
    "conv_inputs",
    "read_axis_positions",
]

BATCH_PRESENT = "batch-axis-present"
CHANNEL_MISSING = "channel-axis-missing"

_MAX_MESSAGE = 100_000
_MAX_MATCHES = 8
_DIMS = r"([^()\[\]\n]{0,200})"
_INT_LIST = r"([\d,\s]{1,200})"

_KERAS_SHAPES = (
    "found shape=(",
    linear(rf"expected shape=\({_DIMS}\), found shape=\({_DIMS}\)"),
)
_KERAS_CONSTRUCTED = (
    "called on an input with incompatible shape (",
    linear(
        rf"constructed with shape \({_DIMS}\) for input [^\n]{{0,300}}?, but it was called on"
        rf" an input with incompatible shape \({_DIMS}\)"
    ),
)
_KERAS_FULL = (
    "Full shape received: ",
    linear(
        r"expected (?:min_|max_)?ndim=(\d{1,2}), found ndim=(\d{1,2})\.?\s*"
        r"Full shape received:\s*[(\[]([^()\[\]\n]{0,200})[)\]]"
    ),
)
_TORCH_CHANNELS = (
    "to have ",
    linear(
        rf"weight of size \[{_INT_LIST}\], expected input\[{_INT_LIST}\] to have (\d{{1,6}})"
        rf" channels, but got (\d{{1,6}}) channels"
    ),
)
_TORCH_RANK = (
    "-dimensional input for ",
    linear(
        r"Expected \d{1,2}-dimensional input for \d{1,2}-dimensional weight\s*"
        r"\[?(\d{1,9}(?:,?\s{1,3}\d{1,9}){0,7})\]?,\s*but got \d{1,2}-dimensional input of"
        r" size\s*\[([\d,\s]{1,200})\]"
    ),
)
_NAMED = linear(
    r"\b(?:missing|lacks?|lacking|without|no)\s+(?:a\s+|an\s+|the\s+|its\s+)?"
    r"(?:channels?|features?|colou?r)\s+(?:axis|axes|dimension|dim)\b"
    r"|\b(?:channels?|features?)\s+(?:axis|dimension|dim)\s+(?:is\s+|was\s+)?missing\b",
    ignore_case=True,
)


def _dims(text: str) -> list[int | None] | None:
    parsed = parse_dims(text)
    return parsed if parsed else None


def _ints(text: str) -> list[int]:
    return [int(d) for d in text.replace(",", " ").split() if d.isdigit()]


def _matches(expected: Sequence[int | None], actual: Sequence[int | None]) -> int | None:
    """Equal known sizes of two aligned shapes; None when a known pair differs."""
    count = 0
    for want, got in zip(expected, actual, strict=True):
        if want is None or got is None:
            continue
        if want != got:
            return None
        count += 1
    return count


def _aligned(expected: Sequence[int | None], actual: Sequence[int | None]) -> str | None:
    """``"channel"`` when ``actual`` is ``expected`` less its last axis, ``"batch"`` when less
    its first, None when the shapes do not say (not one shorter, or a tie)."""
    if not expected or len(actual) != len(expected) - 1:
        return None
    trailing = _matches(expected[:-1], actual)
    leading = _matches(expected[1:], actual)
    if trailing is not None and (leading is None or trailing > leading):
        return "channel"
    if leading is not None and (trailing is None or leading > trailing):
        return "batch"
    if trailing is not None and expected[0] is None and actual[0] is None:
        # Keras writes the batch axis as a leading None on both sides
        return "channel" if any(d is not None for d in actual[1:]) else None
    return None


def _keras_full(accepted: int, found: int, shape: list[int | None] | None) -> str | None:
    """A found shape opening with ``None`` (the batch axis) and a known size after it."""
    if not shape or found >= accepted or len(shape) != found or shape[0] is not None:
        return None
    if all(d is None for d in shape[1:]):
        return None
    return "channel" if found == accepted - 1 else "batch-present"


def _conv(weight: list[int], size: list[int]) -> str | None:
    """An input one axis short of its conv weight whose first and last sizes are both not
    the weight's input channels: a batch of samples without their channel axis."""
    if len(weight) < 3 or len(size) != len(weight) - 1:
        return None
    channels = weight[1]
    if size[0] == channels or size[-1] == channels:
        return None  # [C, H, W] or [H, W, C]: one sample, its batch axis is what is missing
    return "channel"


def _readings(text: str, diffs: Sequence[ShapeDiff]) -> Iterator[str | None]:
    """One reading per wording matched: ``"channel"``, ``"batch-present"`` or ``"batch"``
    (the leading axis is the one missing), None when it does not say."""
    for needle, pattern in (_KERAS_SHAPES, _KERAS_CONSTRUCTED):
        if needle in text:
            for count, m in enumerate(pattern.finditer(text)):
                if count >= _MAX_MATCHES:
                    break
                want, got = _dims(m[1]), _dims(m[2])
                if want and got:
                    yield _aligned(want, got)
    if _KERAS_FULL[0] in text:
        for count, m in enumerate(_KERAS_FULL[1].finditer(text)):
            if count >= _MAX_MATCHES:
                break
            yield _keras_full(int(m[1]), int(m[2]), _dims(m[3]))
    if _TORCH_CHANNELS[0] in text:
        for count, m in enumerate(_TORCH_CHANNELS[1].finditer(text)):
            if count >= _MAX_MATCHES:
                break
            size = _ints(m[2])
            if size and size[0] == int(m[4]):  # the leading axis was read as the channels
                yield _conv(_ints(m[1]), size)
    if _TORCH_RANK[0] in text:
        for count, m in enumerate(_TORCH_RANK[1].finditer(text)):
            if count >= _MAX_MATCHES:
                break
            yield _conv(_ints(m[1]), _ints(m[2]))
    for diff in list(diffs)[:_MAX_MATCHES]:
        expected, actual = diff.get("expected") or [], diff.get("actual") or []
        if op_kind(diff.get("op")) == "input" and expected and actual:
            yield _aligned(list(expected), list(actual))
    if _NAMED.search(text):
        yield "channel"


def conv_inputs(message: str) -> list[tuple[list[int], list[int]]]:
    """The (weight, input size) pairs PyTorch's convolution messages state: ``weight of size
    [32, 1, 3, 3], expected input[64, 28, 28] ...``, ``... for 4-dimensional weight 3 3 1 1,
    but got 3-dimensional input of size [3, 256, 256]``. A conv weight is ``[out, in, k...]``,
    so the layer takes ``[N, in, ...]``: its channels at axis 1."""
    text = message[:_MAX_MESSAGE] if isinstance(message, str) else ""
    pairs: list[tuple[list[int], list[int]]] = []
    for needle, pattern in (_TORCH_CHANNELS, _TORCH_RANK):
        if needle in text:
            for count, m in enumerate(pattern.finditer(text)):
                if count >= _MAX_MATCHES:
                    break
                pairs.append((_ints(m[1]), _ints(m[2])))
    return pairs


def read_axis_positions(message: str, diffs: Sequence[ShapeDiff] = ()) -> list[str]:
    """Every reading the message and its input shape diffs give (see :func:`_readings`)."""
    text = message[:_MAX_MESSAGE] if isinstance(message, str) else ""
    return [reading for reading in _readings(text, diffs) if reading]


def axis_position_facts(message: str, diffs: Sequence[ShapeDiff] = ()) -> set[str]:
    """:data:`BATCH_PRESENT` (and :data:`CHANNEL_MISSING` when exactly one axis is missing)
    when some reading shows the batch axis there and none shows it missing."""
    readings = set(read_axis_positions(message, diffs))
    if not readings or "batch" in readings:
        return set()
    facts = {BATCH_PRESENT}
    if "channel" in readings:
        facts.add(CHANNEL_MISSING)
    return facts
