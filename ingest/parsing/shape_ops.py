"""The kind of operation a shape diff names, whatever the client called it.

Diffs read out of an error message carry the parser's own op names (``conv``, ``matmul``,
``input``, ``load_state_dict``, ...). A client that sends its own diff names the layer
or call as its code does: ``conv2d``, ``nn.Conv2d``, ``Conv2D``, ``linear``, ``Dense``,
``torch.matmul``. Facts that ask "is this a convolution's input?" must read both alike,
or a client that sends more evidence gets a worse answer than one that sends none (a
grayscale batch into an RGB model was told to permute HWC to CHW because its diff said
``conv2d``). The diff keeps the client's name for display; readers compare
:func:`op_kind`.
"""

from __future__ import annotations

__all__ = ["op_kind"]

#: Module paths a layer or function name may be written with (lower case, longest first).
_PREFIXES = (
    "tf.keras.layers.",
    "keras.layers.",
    "torch.nn.functional.",
    "torch.nn.",
    "torch.",
    "nn.functional.",
    "layers.",
    "nn.",
    "f.",
    "jnp.",
    "jax.numpy.",
    "np.",
)
#: Client names of the parser's op kinds (lower case, ``_`` removed); conv is a prefix rule.
_KINDS = {
    "linear": "matmul",
    "dense": "matmul",
    "lazylinear": "matmul",
    "mm": "matmul",
    "bmm": "matmul",
    "addmm": "matmul",
    "matmul": "matmul",
    "loadstatedict": "load_state_dict",
}


def op_kind(op: object) -> str:
    """The parser's op name for ``op`` (``"conv2d"`` -> ``"conv"``), else ``op`` lower-cased;
    ``""`` for anything that is not a short string."""
    if not isinstance(op, str) or len(op) > 64:
        return ""
    name = op.strip().lower()
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    compact = name.replace("_", "")
    if compact.startswith("conv"):
        return "conv"
    return _KINDS.get(compact, name)
