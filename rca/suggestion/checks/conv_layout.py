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

Only the action's *target* shapes are read: the layout an answer starts from or avoids is
often the channels-last one ("Convert the input from NHWC (64, 224, 224, 3) to NCHW (64, 3,
224, 224)", "instead of (64, 224, 224, 3)"), and naming it is no step toward it. A shape is a
source when a word right before it marks it as the old one ("from", "instead of", "rather
than", "not", past layout words such as "NHWC" or "batch"), when it is what a change starts
from (a shape, then "to"/"into"/"->" and another shape, or "becomes"), or when a clause the
answer turns down ends right at it (:func:`.negated_clauses.turned_down`: "Do not reshape to
(64, 224, 224, 3)"). A permutation written as code that moves axis 1 last
(``x.permute(0, 2, 3, 1)``) is a channels-last target too, unless the message's input has
the channels at axis 2 (where that permutation brings them to axis 1), or the answer also
permutes channels first (then the other one is the output's, turned back for viewing).
Linear time: RE2 over at most :data:`MAX_SCAN_CHARS` characters.
"""

from __future__ import annotations

from itertools import islice

from ingest.linear_regex import compile as linear
from rca.suggestion.axis_position import conv_inputs
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.old_mentions import before_mention

__all__ = ["channels_last_violations"]

#: A shape of known sizes written in an answer: ``(1, 256, 256, 3)``, ``[1, 3, 256, 256]``.
_SHAPE = linear(r"[(\[]\s*(\d{1,9}(?:\s*,\s*\d{1,9}){2,7})\s*,?\s*[)\]]")

#: Words that may stand between a source word and the shape it marks ("from NHWC", "instead
#: of the channels-last batch").
_LAYOUT = (
    r"(?:the|a|an|its|this|that|NHWC|NCHW|NWC|NCW|NDHWC|NCDHW"
    r"|channels?[-_ ]last|channels?[-_ ]first"
    r"|layout|format|shape|size|batch|input|tensor|image|images|array)"
)
#: Right before a shape: it names the layout moved away from or avoided
#: (:mod:`rca.suggestion.old_mentions`). Not the state verbs: "make sure the input is (1, 256,
#: 256, 3)" names the target.
_SOURCE_BEFORE = before_mention(
    *("preference", "source", "comparison", "negation", "current-state", "judged-old"),
    then=r"(?:\s+" + _LAYOUT + r"){0,3}\s*[=:]?\s*$",
)
#: Right after a shape: it is what a change starts from ("(64, 224, 224, 3) to (64, 3, ...)",
#: "a (64, 224, 224, 3) batch becomes ...").
_SOURCE_AFTER = linear(
    r"^\s*(?:" + _LAYOUT + r"\s+){0,2}"
    r"(?:(?:becomes?|turns?\s+into)\b"
    r"|(?:to|into|->|=>|→)\s*(?:" + _LAYOUT + r"\s+){0,2}[(\[]\s*\d)",
    ignore_case=True,
)
#: A permutation written as code, whose arguments the shape pattern reads.
_PERMUTE = linear(r"(?:[\w\]]+\.)?\b(?:permute|transpose)\s*$")

#: Shapes read per action: each is checked against windows of bounded length around it.
_MAX_SHAPES = 64

_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}


def _source(text: str, start: int, end: int, down: list[tuple[int, int]]) -> bool:
    """Whether the shape at ``start:end`` is one the action starts from or avoids."""
    before = text[max(0, start - 60) : start].rstrip(" `'\"")
    if _SOURCE_BEFORE.search(before) or _SOURCE_AFTER.search(text[end : end + 60]):
        return True
    return any(a <= start and not text[b:start].strip(" `'\"") for a, b in down)


def _targets(action: str) -> tuple[list[list[int]], list[list[int]]]:
    """The shapes ``action`` names as targets, and the permutations it writes as code."""
    text = action[:MAX_SCAN_CHARS]
    down = turned_down(text)
    shapes: list[list[int]] = []
    permutes: list[list[int]] = []
    for m in islice(_SHAPE.finditer(text), _MAX_SHAPES):
        window = max(0, m.start() - 40)
        permuted = _PERMUTE.search(text[window : m.start()])
        start = window + permuted.start() if permuted else m.start()  # "not x.permute(...)"
        if not _source(text, start, m.end(), down):
            dims = [int(d) for d in m[1].split(",")]
            (permutes if permuted else shapes).append(dims)
    return shapes, permutes


def _moves_channels_last(order: list[int], weight: list[int], size: list[int]) -> bool:
    """Whether the permutation ``order`` of the conv's input moves axis 1 last: ``(0, 2, 3,
    1)`` for a 2-D conv, unless the input has the channels at axis 2 (it then fixes it). A
    1-D conv's ``(0, 2, 1)`` is its own inverse, so it says nothing about the layout."""
    rank = len(weight)
    if rank < 4 or order != [0, *range(2, rank), 1]:
        return False
    return not (len(size) == rank and size[2] == weight[1])


def _complaint(weight: list[int], what: str) -> list[str]:
    spatial = _SPATIAL.get(len(weight) - 2, "...")
    layout = f"N, {weight[1]}, {spatial}"
    return [
        f"the convolution's weight {weight} takes its input as [{layout}]: channels"
        f" at axis 1, so {what} (channels last) still fails; keep the"
        " channels at axis 1 (`x.unsqueeze(0)` for one [C, H, W] sample,"
        " `x.permute(0, 3, 1, 2)` for an [N, H, W, C] batch)"
    ]


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
    shapes, permutes = _targets(action)
    for shape in shapes:
        for weight, _ in convs:
            if _channels_last(shape, weight):
                return _complaint(weight, str(tuple(shape)))
    for order in permutes:
        for weight, size in convs:
            first = [0, len(weight) - 1, *range(1, len(weight) - 1)]
            if _moves_channels_last(order, weight, size) and first not in permutes:
                return _complaint(weight, f"`permute{tuple(order)}`")
    return []
