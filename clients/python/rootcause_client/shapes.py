"""What a module was given, and what it expected: the shape diff of an incident.

The expected shape comes from what the module declares (a Linear's `in_features`, a
convolution's `in_channels`, a norm's `normalized_shape`), and otherwise from the input
the same module accepted on its last successful call. Dimensions that any value fits
(the batch, a sequence length) are `None`, as in the server's schema. Only tensors are
described, and at most a few per call: this runs on the failure path, and an argument
list can be a whole batch of Python objects.
"""

from __future__ import annotations

from typing import Any

MAX_TENSORS = 8


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def tensors(value: Any, limit: int = MAX_TENSORS) -> list[Any]:
    """The tensors in a call's arguments, first ones first, one level into lists and dicts."""
    found: list[Any] = []
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if len(found) >= limit:
            break
        if _is_tensor(item):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            found.extend(v for v in item[: limit - len(found)] if _is_tensor(v))
        elif isinstance(item, dict):
            found.extend(v for v in list(item.values())[: limit - len(found)] if _is_tensor(v))
    return found[:limit]


def shape_of(tensor: Any) -> list[int | None]:
    return [int(d) if d is not None else None for d in tuple(tensor.shape)]


def describe(tensor: Any) -> dict[str, Any]:
    """Shape, dtype and device of one tensor (torch, numpy or a Keras tensor)."""
    device = getattr(tensor, "device", None)
    return {
        "shape": shape_of(tensor),
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "device": str(device) if device is not None else "",
    }


def _channels_first(actual: list[int | None], channels: int, spatial: int) -> list[int | None]:
    """A convolution/batch-norm input: (N, C, *spatial) or, unbatched, (C, *spatial)."""
    if len(actual) == spatial + 1:
        return [channels, *actual[1:]]
    if len(actual) >= 2:
        return [actual[0], channels, *actual[2:]]
    return actual


def declared(module: Any, actual: list[int | None]) -> list[int | None] | None:
    """The input shape `module` declares it takes, in the form of `actual`; None if it says none."""
    if not actual:
        return None
    kind = type(module).__name__
    if hasattr(module, "in_features") and kind in ("Linear", "LazyLinear", "Bilinear"):
        return [None] * (len(actual) - 1) + [int(module.in_features)]
    if hasattr(module, "in_channels") and kind.startswith(("Conv", "LazyConv")):
        spatial = len(getattr(module, "kernel_size", ())) or max(1, len(actual) - 2)
        return _channels_first(actual, int(module.in_channels), spatial)
    if kind.startswith(("BatchNorm", "InstanceNorm")) and hasattr(module, "num_features"):
        return _channels_first(actual, int(module.num_features), max(0, len(actual) - 2))
    if kind in ("LayerNorm", "RMSNorm") and getattr(module, "normalized_shape", None):
        norm = [int(d) for d in module.normalized_shape]
        return [None] * max(0, len(actual) - len(norm)) + norm
    if kind == "MultiheadAttention" and hasattr(module, "embed_dim"):
        return [None] * (len(actual) - 1) + [int(module.embed_dim)]
    return None


def expected(
    module: Any, actual: list[int | None], last_good: list[int | None] | None
) -> list[int | None] | None:
    """What the module should have been given: declared, else the last accepted input's
    rank and sizes with batch-like leading dimensions left open."""
    if (shape := declared(module, actual)) is not None:
        return shape
    if last_good is None or last_good == actual:
        return None
    if len(last_good) != len(actual):
        return list(last_good)
    return [None if i == 0 else d for i, d in enumerate(last_good)]


def mismatch(expected_shape: list[int | None] | None, actual: list[int | None]) -> bool:
    """True when `actual` does not fit `expected_shape` (None fits any size)."""
    if expected_shape is None:
        return False
    if len(expected_shape) != len(actual):
        return True
    return any(e is not None and e != a for e, a in zip(expected_shape, actual))
