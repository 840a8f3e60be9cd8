"""A suggestion that rebuilds an RGB convolution for the input's channel count.

``weight of size [64, 3, 7, 7], expected input[64, 1, 224, 224] to have 3 channels, but got
1`` (``grayscale-input``; 4 channels: ``rgba-input``) is a three-channel stem fed a
one- or four-channel image. Image backbones take RGB, and their first convolution's weights
were learned on it: "replace ``model.conv1`` with ``nn.Conv2d(1, 64, 7, ...)``", "set the
first conv's ``in_channels`` to 1" or ``model.conv1 = nn.Conv2d(4, 64, ...)`` swap that
layer for an untrained one of another width and make the error go away with the model
wrong. The input is what to convert (``.convert("RGB")``, ``x.repeat(1, 3, 1, 1)``). An answer
that trains the new stem ("... and fine-tune it") or asks a library to adapt the pretrained
filters (timm's ``in_chans=1`` sums them) says what the weights become, as the runbook's own
step does, and passes; so does a convolution built for three channels.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.negated_clauses import turned_down

__all__ = ["stem_replace_violations"]

_CHANNEL_FACTS = {"grayscale-input": 1, "rgba-input": 4}
#: A convolution built with a channel count (``nn.Conv2d(1, 64, 7)``,
#: ``Conv2d(in_channels=1, ...)``), or its ``in_channels`` given a value ("in_channels to 1").
_NEW_WIDTH = linear(
    r"\bconv(?:olution)?(?:2d|3d|1d)?\s*\(\s*(?:in_channels\s*=\s*)?(?P<built>\d+)\s*[,)]"
    r"|\bin_channels\s*(?:=|:|to|of|from\s+\d+\s+to)\s*`?(?P<set>\d+)\b",
    ignore_case=True,
)
#: What the new stem's weights become: it is trained, or the library adapts the old filters.
_BUILT, _SET = (_NEW_WIDTH.groupindex[name] for name in ("built", "set"))
_WEIGHTS_SAID = linear(r"\b(?:fine-?tun\w*|re-?train\w*|train\w*|in_chans)\b", ignore_case=True)


def stem_replace_violations(action: str, facts: Iterable[str]) -> list[str]:
    """Why rebuilding the stem for the input's channels is wrong here (empty: it is not that)."""
    shown = {_CHANNEL_FACTS[fact] for fact in facts if fact in _CHANNEL_FACTS}
    text = (action or "")[:MAX_SCAN_CHARS]
    if not shown or _WEIGHTS_SAID.search(text):
        return []
    for start, end in turned_down(text):  # "Don't replace conv1 with nn.Conv2d(1, ...)"
        text = text[:start] + " " * (end - start) + text[end:]
    for match in _NEW_WIDTH.finditer(text):
        width = int(match.group(_BUILT) or match.group(_SET))
        if width in shown:
            return [
                f"do not rebuild the convolution for {width} input channel(s): it expects 3"
                " (RGB) and its weights were learned on them; a new layer of another width"
                " starts untrained. Convert the input to 3 channels (load images as RGB,"
                " or repeat the single channel)"
            ]
    return []
