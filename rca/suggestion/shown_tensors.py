"""What the incident shows about its tensors: the device, dtype and shape each one already has.

A step that moves, casts or reshapes a tensor to what it already is cannot be the fix
(:mod:`rca.suggestion.step_tensors`): "move the input to the GPU" when the message says
``Input type (torch.cuda.FloatTensor)``, "cast the input to float32" when the log says the
input's dtype is ``torch.float32``. Where the incident shows them:

- PyTorch's type pairs: ``Input type (torch.cuda.FloatTensor) and weight type
  (torch.FloatTensor)`` gives the input's device and dtype and the model's (its weight's);
- reported attributes in the message and log lines, before any advice word of their sentence
  (:func:`rca.suggestion.shown_options.reported`): ``x.dtype: torch.float32``, ``input.device
  = cuda:0``, "the dtype of input is torch.float32", "the inputs are on cuda:0";
- the incident's shape diffs (``ingest.parsing.shapes``): the shape a tensor has and the one
  the operation expected; and PyTorch's rank message, which they do not hold ("Expected
  4-dimensional input for 4-dimensional weight [64, 1, 4, 4], but got 3-dimensional input of
  size [128, 256, 256]", read by :func:`ingest.parsing.shapes.rank_mismatches`): the input's
  shape, and of the expected one its rank and its channel axis;
- the inference context's fields named for one (``input_dtype``, ``input_shape``, ``device``).

Tensors are grouped by their role, as a step names them: ``input`` (inputs, batch, images,
``x``, ``pixel_values``...), ``model`` (its weights, parameters, layers) and ``target``
(labels). Devices are compared as ``cuda``/``cuda:N``/``cpu``/``mps``, dtypes by their
canonical name (``float`` and ``FloatTensor`` are ``float32``).

Linear time: RE2 patterns (:mod:`ingest.linear_regex`) over bounded texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ingest.linear_regex import compile as linear
from ingest.parsing.shape_ops import op_kind
from ingest.parsing.shapes import ShapeDiff, parse_dims, rank_mismatches
from rca.suggestion.shown_options import reported

__all__ = ["ShownTensor", "device_of", "dtype_of", "read_shown_tensors", "role_of"]

_MAX_TEXT = 20_000
_MAX_LINES = 400
_MAX_ITEMS = 200

#: Canonical dtype names, by every spelling a message, log or step uses.
_DTYPES = {
    "float32": ("float", "float32", "fp32", "single", "floattensor"),
    "float16": ("half", "float16", "fp16", "halftensor"),
    "bfloat16": ("bfloat16", "bf16", "bfloat16tensor"),
    "float64": ("double", "float64", "fp64", "doubletensor"),
    "int64": ("long", "int64", "longtensor"),
    "int32": ("int", "int32", "inttensor"),
    "int8": ("int8", "chartensor"),
    "uint8": ("uint8", "byte", "bytetensor"),
    "bool": ("bool", "booltensor"),
}
_DTYPE = {spelling: name for name, spellings in _DTYPES.items() for spelling in spellings}
#: The words a step or a message uses for each role.
_ROLES = {
    "input": (
        "input",
        "inputs",
        "batch",
        "batches",
        "data",
        "x",
        "xb",
        "image",
        "images",
        "img",
        "imgs",
        "pixel_values",
        "input_ids",
        "features",
        "feature",
        "sample",
        "samples",
        "tensor",
        "tensors",
        "input_tensor",
        "inp",
    ),
    "model": (
        "model",
        "weight",
        "weights",
        "module",
        "modules",
        "layer",
        "layers",
        "parameters",
        "params",
        "net",
        "network",
    ),
    "target": ("target", "targets", "label", "labels", "y", "yb"),
}
_ROLE = {word: role for role, words in _ROLES.items() for word in words}

_TYPE_PAIR = linear(
    r"\b(?P<role>[A-Za-z_]\w{0,30})\s+type\s+\((?P<type>torch\.(?:cuda\.)?[A-Za-z]{1,20}Tensor)\)"
)
_ATTRIBUTE = linear(
    r"\b(?P<role>[A-Za-z_]\w{0,30})\.(?P<attr>dtype|device|shape)\s*(?:=|==|:|is)\s*"
    r"(?P<value>\(?[\w.:'\"\[\], ]{1,60})"
)
_DTYPE_OF = linear(
    r"\b(?P<attr>dtype|device|shape)\s+of\s+(?:the\s+|my\s+|our\s+)?(?P<role>[A-Za-z_]\w{0,30})"
    r"\s+(?:is|was|are|were)\s+(?P<value>\(?[\w.:'\"\[\], ]{1,60})",
    ignore_case=True,
)
_ON_DEVICE = linear(
    r"\b(?:the\s+|my\s+|our\s+)?(?P<role>[A-Za-z_]\w{0,30})\s+(?:is|are|was|were)\s+"
    r"(?:already\s+|all\s+)?on\s+(?:the\s+)?(?P<value>cuda(?::\d+)?|gpu|cpu|mps)\b",
    ignore_case=True,
)
_TENSOR_TYPE = linear(r"^torch\.(?P<cuda>cuda\.)?(?P<dtype>[A-Za-z]+)Tensor$")
_DEVICE = linear(r"^['\"]?(?P<kind>cuda|gpu|cpu|mps)(?::(?P<index>\d{1,3}))?['\"]?$")


@dataclass(frozen=True)
class ShownTensor:
    """What the incident shows one role's tensor to be (None: not shown)."""

    device: str | None = None
    dtype: str | None = None
    shape: tuple[int | None, ...] | None = None
    #: The shape the failing operation expected of it (a shape diff's ``expected``).
    expected: tuple[int | None, ...] | None = None

    def describe(self) -> str:
        """What is shown, in words for the prompt ("on cuda, float32, shape [3, 224, 224]")."""
        parts = [f"on {self.device}" if self.device else "", self.dtype or ""]
        parts.append(f"shape {list(self.shape)}" if self.shape is not None else "")
        return ", ".join(part for part in parts if part)


def role_of(word: str) -> str | None:
    """The role a tensor's name plays (``pixel_values``: input, ``net``: model)."""
    return _ROLE.get(word.strip("`'\" ").rsplit(".", 1)[-1].lower())


def dtype_of(text: str) -> str | None:
    """The canonical dtype a spelling names (``torch.half``, ``HalfTensor``, ``fp16``)."""
    word = text.strip().strip("`'\"").lower()
    word = word.removeprefix("torch.").removeprefix("cuda.").removeprefix("np.")
    return _DTYPE.get(word) or _DTYPE.get(word.removeprefix("numpy."))


def device_of(text: str) -> str | None:
    """The device a spelling names: ``cuda``, ``cuda:1`` (``gpu`` is ``cuda``), ``cpu``."""
    match = _DEVICE.match(text.strip().strip("`()").lower().removeprefix("torch.device("))
    if match is None:
        return None
    kind = "cuda" if match.group("kind") == "gpu" else match.group("kind")
    return f"{kind}:{match.group('index')}" if match.group("index") else kind


class _Found:
    def __init__(self) -> None:
        self.tensors: dict[str, ShownTensor] = {}

    def add(self, role: str | None, **values: Any) -> None:
        if role is None:
            return
        known = self.tensors.get(role, ShownTensor())
        fresh = {k: v for k, v in values.items() if v is not None and getattr(known, k) is None}
        self.tensors[role] = replace(known, **fresh)

    def value(self, role: str | None, attr: str, raw: str) -> None:
        raw = raw.strip().rstrip(".,;")
        if attr == "dtype":
            self.add(role, dtype=dtype_of(raw.split()[0] if raw.split() else raw))
        elif attr == "device":
            self.add(role, device=device_of(raw.split()[0] if raw.split() else raw))
        elif (dims := parse_dims(raw)) is not None and dims:
            self.add(role, shape=tuple(dims))


def _text(text: str, found: _Found) -> None:
    for line in text[:_MAX_TEXT].splitlines()[:_MAX_LINES]:
        for match in _TYPE_PAIR.finditer(line):
            type_match = _TENSOR_TYPE.match(match.group("type"))
            if type_match is not None:
                found.add(
                    role_of(match.group("role")),
                    device="cuda" if type_match.group("cuda") else "cpu",
                    dtype=dtype_of(type_match.group("dtype") + "tensor"),
                )
        for diff in rank_mismatches(line):
            found.add("input", shape=tuple(diff["actual"]), expected=tuple(diff["expected"]))
        said = reported(line)
        for pattern in (_ATTRIBUTE, _DTYPE_OF):
            for match in pattern.finditer(said):
                found.value(role_of(match.group("role")), match.group("attr"), match.group("value"))
        for match in _ON_DEVICE.finditer(said):
            found.add(role_of(match.group("role")), device=device_of(match.group("value")))


def _context(context: Mapping[str, Any], found: _Found) -> None:
    """Fields named ``<role>_dtype``/``_device``/``_shape`` (``dtype`` alone: the input's)."""
    for key, value in list(context.items())[:_MAX_ITEMS]:
        name = str(key)[:80].lower()
        for attr in ("dtype", "device", "shape"):
            if name == attr or name.endswith("_" + attr):
                role = role_of(name.removesuffix(attr).rstrip("_")) if name != attr else "input"
                raw = value if attr == "shape" and isinstance(value, list | tuple) else str(value)
                if isinstance(raw, list | tuple):
                    dims = parse_dims(list(raw)[:16])
                    found.add(role, shape=tuple(dims) if dims else None)
                else:
                    found.value(role, attr, raw[:200])


def _unbatched_conv(diff: ShapeDiff) -> bool:
    """A conv diff read as one unbatched sample (its channels at dim 0: ``expected
    input[64, 28, 28] to have 1 channels, but got 64``): PyTorch takes that rank or one
    more, so the expected shape fixes neither the rank nor where the channels are."""
    expected, actual = diff.get("expected") or [], diff.get("actual") or []
    return (
        op_kind(diff.get("op")) == "conv"
        and len(expected) == len(actual) > 1
        and expected[0] != actual[0]
        and list(expected[1:]) == list(actual[1:])
    )


def read_shown_tensors(
    message: str,
    logs: Sequence[str] = (),
    shape_diff: Sequence[ShapeDiff] = (),
    inference_context: Mapping[str, Any] | None = None,
) -> dict[str, ShownTensor]:
    """Each role's device, dtype and shape as the incident shows them (role -> tensor)."""
    found = _Found()
    _text(message, found)
    for entry in logs[:_MAX_LINES]:
        _text(entry, found)
    for diff in list(shape_diff)[:_MAX_ITEMS]:
        role = role_of(str(diff.get("tensor") or "input"))
        actual, expected = diff.get("actual"), diff.get("expected")
        # An unbatched conv takes this rank or one more: its expected shape fixes no rank.
        fixed = isinstance(expected, list) and not _unbatched_conv(diff)
        found.add(
            role,
            shape=tuple(actual) if isinstance(actual, list) else None,
            expected=tuple(expected) if fixed else None,
        )
    _context(inference_context or {}, found)
    return found.tensors
