"""What a step does to a tensor (move, cast, reshape, add an axis), read from its own words,
and whether the incident shows that already done.

"Move the input batch to the GPU", "cast inputs to `float32`", "`x = x.to('cuda')`",
"`x.half()`", "`x.view(1, 3, 224, 224)`", "add a batch dimension (`x.unsqueeze(0)`)": each
names a tensor (by its role: input, model, target; :func:`rca.suggestion.shown_tensors.role_of`)
and what it should become: a device, a dtype, a shape, or one more axis. The target may be a
literal (``cuda``, ``float16``) or another tensor's ("to the model's device",
``x.to(model.dtype)``), resolved against what the incident shows of that one. A step whose
tensor the incident already shows as the step would make it is a repeat, never the fix
(:mod:`rca.suggestion.premises`); an unknown contradicts nothing. Adding an axis repeats
nothing when the shape diff is missing one (its rank is below the expected rank); it is
contradicted when the tensor already has the rank the operation expected.

Linear time: RE2 patterns (:mod:`ingest.linear_regex`) over at most :data:`_MAX_ACTION`
characters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ingest.linear_regex import compile as linear
from rca.suggestion.shown_tensors import ShownTensor, device_of, dtype_of, role_of

__all__ = ["TensorTarget", "repeated_tensor_targets", "tensor_targets"]

_MAX_ACTION = 4000

#: "move/cast <tensor> to <target>": the tensor's words and the target's.
_PROSE = linear(
    r"\b(?:move|put|send|transfer|copy|cast|convert|change|place)\s+"
    r"(?:the\s+|all\s+|your\s+|each\s+|every\s+)*(?P<what>`[^`\n]{1,40}`|[A-Za-z_][\w ]{0,30}?)"
    r"\s+(?:to|onto|into|as)\s+(?:the\s+|a\s+)?"
    r"(?P<target>`[^`\n]{1,60}`|[A-Za-z_][\w.:]*(?:'s\s+(?:device|dtype))?)",
    ignore_case=True,
)
_TO_CALL = linear(
    r"(?P<var>[A-Za-z_][\w.]{0,40})\.to\((?P<args>[^()\n]{0,80}(?:\([^()\n]{0,40}\)[^()\n]{0,40})?)\)"
)
_METHOD = linear(
    r"(?P<var>[A-Za-z_][\w.]{0,40})\.(?P<method>cuda|cpu|float|half|double|long|int|bfloat16)"
    r"\(\)"
)
_RESHAPE = linear(r"(?P<var>[A-Za-z_][\w.]{0,40})\.(?:view|reshape)\((?P<dims>[\d\s,]{1,60})\)")
_UNSQUEEZE = linear(
    r"(?P<var>[A-Za-z_][\w.]{0,40})\.unsqueeze_?\(\s*(?:dim\s*=\s*)?(?P<axis>\d)\s*\)"
)
_PERMUTE = linear(r"(?P<var>[A-Za-z_][\w.]{0,40})\.permute\(\s*(?P<dims>\d(?:\s*,\s*\d){1,7})\s*\)")
_BATCH_AXIS = linear(
    r"\badd\s+(?:a\s+|the\s+)?(?:leading\s+)?batch\s+(?:dimension|dim|axis)\b", ignore_case=True
)
_REFERENCE = linear(
    r"^(?:next\()?(?P<role>[A-Za-z_]\w*)(?:\.parameters\(\)\))?(?:'s\s+|\.)(?P<attr>device|dtype)$"
)
_METHOD_TARGET = {"cuda": ("device", "cuda"), "cpu": ("device", "cpu")}


@dataclass(frozen=True)
class TensorTarget:
    """A tensor (by role) and what the step makes of it: ``kind`` is ``device``, ``dtype``,
    ``shape``, ``axis`` (one more axis, at ``value``) or ``layout`` (``channels_first``:
    a permute that moves the last axis forward); ``value`` a literal (``cuda``,
    ``float16``, ``1,3,224,224``) or ``@<role>`` for another tensor's (``@model``)."""

    role: str
    kind: str
    value: str


def _target(raw: str) -> tuple[str, str] | None:
    """(kind, value) of a target as written: a device, a dtype, or another tensor's."""
    text = raw.strip().strip("`").strip()
    if (device := device_of(text)) is not None:
        return "device", device
    if (dtype := dtype_of(text)) is not None:
        return "dtype", dtype
    if (ref := _REFERENCE.match(text)) is not None and role_of(ref.group("role")):
        return ref.group("attr"), "@" + str(role_of(ref.group("role")))
    return None


def _call_target(args: str) -> tuple[str, str] | None:
    """The target of ``.to(...)``: its first argument or its ``device=``/``dtype=`` one."""
    for arg in args.split(",", 4):
        value = arg.partition("=")[2] if "=" in arg else arg
        if (found := _target(value)) is not None:
            return found
    return None


def tensor_targets(action: str) -> list[TensorTarget]:
    """Every tensor the action moves, casts or reshapes, with what it makes of it."""
    text = action[:_MAX_ACTION]
    found: list[TensorTarget] = []

    def add(var: str, target: tuple[str, str] | None) -> None:
        role = role_of(var.strip("` ").split()[-1]) if var.strip("` ").split() else None
        if role is not None and target is not None:
            found.append(TensorTarget(role, *target))

    for match in _PROSE.finditer(text):
        add(match.group("what"), _target(match.group("target")))
    for match in _TO_CALL.finditer(text):
        add(match.group("var"), _call_target(match.group("args")))
    for match in _METHOD.finditer(text):
        method = match.group("method")
        add(match.group("var"), _METHOD_TARGET.get(method) or ("dtype", dtype_of(method) or ""))
    for match in _RESHAPE.finditer(text):
        dims = ",".join(d.strip() for d in match.group("dims").split(",") if d.strip())
        add(match.group("var"), ("shape", dims))
    for match in _PERMUTE.finditer(text):
        order = [int(d) for d in match.group("dims").split(",")]
        # The last axis moved to the front (unbatched) or after the batch axis: channels first.
        if len(order) - 1 in order and order.index(len(order) - 1) in (0, 1):
            add(match.group("var"), ("layout", "channels_first"))
    for match in _UNSQUEEZE.finditer(text):
        add(match.group("var"), ("axis", match.group("axis")))
    if _BATCH_AXIS.search(text):
        found.append(TensorTarget("input", "axis", "0"))
    return [target for target in found if target.value]


def _same_device(shown: str, wanted: str) -> bool:
    """``cuda`` and ``cuda:0`` are one device unless both name an index."""
    if ":" in shown and ":" in wanted:
        return shown == wanted
    return shown.split(":")[0] == wanted.split(":")[0]


def _repeats(target: TensorTarget, shown: Mapping[str, ShownTensor]) -> str | None:
    """How the incident shows the tensor already as the step would make it, or None."""
    tensor = shown.get(target.role)
    if tensor is None:
        return None
    wanted = target.value
    if wanted.startswith("@"):  # another tensor's device or dtype, if the incident shows it
        other = shown.get(wanted[1:]) if wanted[1:] != target.role else None
        wanted = str(getattr(other, target.kind, None) or "") if other else ""
        if not wanted:
            return None
    if target.kind == "device" and tensor.device and _same_device(tensor.device, wanted):
        return f"the {target.role} is already on {tensor.device}"
    if target.kind == "dtype" and tensor.dtype and tensor.dtype == wanted:
        return f"the {target.role} is already {tensor.dtype}"
    shape = tensor.shape
    if target.kind == "shape" and shape and ",".join(str(d) for d in shape) == wanted:
        return f"the {target.role} already has shape {list(shape)}"
    expected = tensor.expected
    if target.kind == "axis" and shape is not None and expected is not None:
        return _axis_gives(target, shape, expected)
    if target.kind == "layout" and shape is not None and expected is not None:
        return _channels_first(target, shape, expected)
    return None


def _channels_first(
    target: TensorTarget, shape: tuple[int | None, ...], expected: tuple[int | None, ...]
) -> str | None:
    """Why moving the channels first is no fix: the tensor already has the channel count the
    operation expects (``expected[1]``) on its channel axis (1, or 0 for one unbatched
    sample)."""
    channels = expected[1] if len(expected) > 1 else None
    axis = {len(expected): 1, len(expected) - 1: 0}.get(len(shape))
    if channels is None or axis is None or shape[axis] != channels:
        return None
    return f"the {target.role} {list(shape)} already has its {channels} channels first"


def _axis_gives(
    target: TensorTarget, shape: tuple[int | None, ...], expected: tuple[int | None, ...]
) -> str | None:
    """Why a new axis at ``target.value`` does not give the expected shape: the rank differs
    (none was missing) or a dimension both know differs ([1, 128, 256, 256] for a weight that
    needs 1 channel). None when it would fit."""
    at = int(target.value)
    if at > len(shape):
        return None
    result = shape[:at] + (1,) + shape[at:]
    if len(result) != len(expected):
        return f"the {target.role} already has {len(shape)} dimensions"
    for axis, (got, wanted) in enumerate(zip(result, expected, strict=True)):
        if got is not None and wanted is not None and got != wanted:
            return (
                f"the {target.role} is {list(shape)}, so a new axis {at} makes it"
                f" {list(result)} (dimension {axis}: {got}, not {wanted})"
            )
    return None


def repeated_tensor_targets(action: str, shown: Mapping[str, ShownTensor]) -> list[str]:
    """Why the incident shows what the action does to its tensors already done (empty: it
    does not, or the incident does not say)."""
    reasons: list[str] = []
    for target in tensor_targets(action):
        reason = _repeats(target, shown)
        if reason is not None and reason not in reasons:
            reasons.append(reason)
    return reasons
