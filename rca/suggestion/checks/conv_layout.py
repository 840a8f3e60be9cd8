"""A suggestion whose target shape puts the channels last for a channels-first convolution.

PyTorch states a convolution's weight in its shape errors (``Expected 4-dimensional input for
4-dimensional weight 3 3 1 1, but got 3-dimensional input of size [3, 256, 256]``). The
weight is ``[out, in, k...]``, so the layer takes ``[N, in, ...]``: the channels at axis 1.
"Reshape the input to (1, 256, 256, 3) channels-last" gives it an input of the right rank
whose axis 1 holds 256: the conv still rejects it (or, when the sizes happen to divide,
mixes pixels into channels). An answer that names a full-rank target shape with the
weight's input channels last and something else at axis 1 contradicts the layout the
message states, whoever wrote it. Not failed: a size at axis 1 that is the weight's first
size (a transposed conv's ``[in, out, k...]``) or a multiple of its input channels (a
grouped conv), and any weight with one input channel (every size is then a multiple).
Linear time: RE2 over at most :data:`MAX_SCAN_CHARS` characters.
"""

from __future__ import annotations

from ingest.linear_regex import compile as linear
from rca.suggestion.axis_position import conv_inputs
from rca.suggestion.checks import MAX_SCAN_CHARS

__all__ = ["channels_last_violations"]

#: A shape of known sizes written in an answer: ``(1, 256, 256, 3)``, ``[1, 3, 256, 256]``.
_SHAPE = linear(r"[(\[]\s*(\d{1,9}(?:\s*,\s*\d{1,9}){2,7})\s*,?\s*[)\]]")


_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}


def _shapes(action: str) -> list[list[int]]:
    return [[int(d) for d in m[1].split(",")] for m in _SHAPE.finditer(action[:MAX_SCAN_CHARS])]


def _channels_last(shape: list[int], weight: list[int]) -> bool:
    channels = weight[1]
    if len(shape) != len(weight) or shape[-1] != channels or shape[1] == weight[0]:
        return False
    return shape[1] % channels != 0


def channels_last_violations(action: str, message: str) -> list[str]:
    """Why the action's target shape cannot feed the convolution the message states (empty:
    it names no such shape, or the message states no conv weight)."""
    convs = [(w, size) for w, size in conv_inputs(message) if len(w) >= 3 and w[1] > 0]
    if not convs or not isinstance(action, str):
        return []
    for shape in _shapes(action):
        for weight, _ in convs:
            if _channels_last(shape, weight):
                spatial = _SPATIAL.get(len(weight) - 2, "...")
                layout = f"N, {weight[1]}, {spatial}"
                return [
                    f"the convolution's weight {weight} takes its input as [{layout}]: channels"
                    f" at axis 1, so {tuple(shape)} (channels last) still fails; keep the"
                    " channels at axis 1 (`x.unsqueeze(0)` for one [C, H, W] sample,"
                    " `x.permute(0, 3, 1, 2)` for an [N, H, W, C] batch)"
                ]
    return []
