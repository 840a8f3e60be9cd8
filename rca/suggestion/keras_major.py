"""Whether the incident runs Keras 3: a step written for Keras 2's API is then no fix.

Keras 3 changed the saving API: ``Model.load_weights(filepath, skip_mismatch=False,
**kwargs)`` has no ``by_name`` (Keras 2's ``load_weights(filepath, by_name=False,
skip_mismatch=False, options=None)``; keras.io, "Weights-only saving & loading" for Keras 3
and for Keras 2), so a step that loads "by layer name" in Keras 2's words does not apply, and
``skip_mismatch`` alone would leave the failing layers at their initial values. Which Keras
runs is read from what the incident prints:

- a Keras version of 3 or later next to its name (``keras 3.1.1``, ``keras==3.3.3``,
  ``Keras: 3.0.5``, ``Keras Version: 3.1.0``, "your installed version of Keras is Keras 3");
- a layer printed as Keras 3's ``Layer.__repr__`` prints it, ``<LSTMCell name=lstm_cell,
  built=True>`` (Keras 2 prints ``<keras.layers.core.dense.Dense object at 0x...>``).

``tf_keras`` / ``tf-keras`` (Keras 2 packaged for TensorFlow 2.16+) is another package and
shows nothing here. Linear time: RE2 over the first lines of each text.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["KERAS_3", "keras_major_facts"]

KERAS_3 = "keras-3-in-use"
_VERSION = linear(
    r"(?:^|[^\w-])keras(?:\s*(?:==|:|version:?)\s*v?[3-9](?:\.\d+)*|\s+v?[3-9](?:\.\d+)+)"
    r"(?:$|[^\w.]|\.(?:\s|$))"
    r"|\bis\s+keras\s+[3-9](?:$|[^\w.]|\.(?:\s|$))",
    ignore_case=True,
)
_REPR = linear(r"<[A-Za-z_]\w{0,80} name=[^,<>\n]{1,200}, built=(?:True|False)>")


def keras_major_facts(texts: Sequence[str]) -> set[str]:
    """``{KERAS_3}`` when the texts show Keras 3 or later running."""
    for line in first_lines(texts):
        if _VERSION.search(line) or _REPR.search(line):
            return {KERAS_3}
    return set()
