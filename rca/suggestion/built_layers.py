"""Whether the Keras layers an error lists are already built: building the model first is no fix.

Keras 3 prints a layer as ``<LSTMCell name=lstm_cell, built=True>`` (``Layer.__repr__``), and
its loading errors list the objects that failed that way ("A total of 1 objects could not be
loaded ... List of objects that could not be loaded: [<LSTMCell name=lstm_cell,
built=True>]"). "Build the model before loading (call it once, or ``model.build(...)``)"
supposes the layers have no variables yet; when every layer shown says ``built=True`` they
have them, and the mismatch lies elsewhere (another architecture, or a loader that does not
read these variables). ``layers-already-built`` holds when the texts show at least one such
layer and none with ``built=False``: an unbuilt one keeps building a possible fix.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["BUILT", "built_layer_facts"]

BUILT = "layers-already-built"
_LAYER = linear(r"<[A-Za-z_]\w{0,80} name=[^,<>\n]{1,200}, built=(?P<built>True|False)>")
_MAX_MATCHES = 50


def built_layer_facts(texts: Sequence[str]) -> set[str]:
    """``{BUILT}`` when the texts show Keras layers and every one of them is built."""
    states: list[str] = []
    for line in first_lines(texts):
        states.extend(m.group("built") for m in _LAYER.finditer(line))
        if len(states) >= _MAX_MATCHES:
            break
    return {BUILT} if states and "False" not in states else set()
