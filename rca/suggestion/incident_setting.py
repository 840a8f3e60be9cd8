"""The incident's setting as premises see it: which frameworks its code runs, which options
its message says are already set.

Both are read generically. Frameworks come from where code names its own package: dotted
module paths in the error type, the frames' modules and files, and the message; the
inference context's ``framework`` field; and the handful of error classes only one
framework raises. Options come from the message's own sentences that say an option is set,
enabled or passed already ("Since `find_unused_parameters=True` is enabled", "max_length is
already set to 20"). Nothing here knows a runbook, a step or a case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ingest.linear_regex import compile as linear
from ingest.parsing.frames import Frame

__all__ = ["IncidentSetting", "frameworks_in", "options_already_set", "read_setting"]

#: Top-level packages (as they appear in module paths and file paths) and the framework
#: whose API they are. Libraries that run on several frameworks (transformers) name none.
PACKAGES: Mapping[str, str] = {
    "torch": "pytorch", "torchvision": "pytorch", "torchaudio": "pytorch",
    "pytorch_lightning": "pytorch", "lightning": "pytorch",
    "tensorflow": "tensorflow", "keras": "tensorflow", "tf_keras": "tensorflow",
    "tf": "tensorflow",
    "jax": "jax", "jaxlib": "jax", "flax": "jax", "optax": "jax",
    "paddle": "paddle", "mxnet": "mxnet",
    "onnxruntime": "onnxruntime", "tensorrt": "tensorrt",
}  # fmt: skip
#: Error classes that only one framework raises (their module path is often not printed).
ERROR_CLASSES: Mapping[str, str] = {
    "resourceexhaustederror": "tensorflow",
    "invalidargumenterror": "tensorflow",
    "failedpreconditionerror": "tensorflow",
    "xlaruntimeerror": "jax",
    "outofmemoryerror": "pytorch",
}
#: What the inference context's ``framework`` field may say, normalised.
_CONTEXT_NAMES: Mapping[str, str] = {**PACKAGES, "pytorch": "pytorch", "tensorflow": "tensorflow"}

_MODULE_REF = linear(r"(?:^|[^\w.])([A-Za-z_][A-Za-z0-9_]*)\.[A-Za-z_]")
_PATH_PART = linear(r"[/\\]([A-Za-z_][A-Za-z0-9_]*)[/\\]")
_WORD = linear(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME = r"`?-{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)`?(?:\s*(?:=|:)\s*`?(?P<value>[\w.-]+)`?)?"
_SET = r"(?:set|enabled|turned on|passed|specified|given|true|on)"
#: "<option>[=<value>] is (already) set/enabled", "already set <option>=<value>".
_IS_SET = linear(
    _NAME
    + r"\s+(?:is|was|has been|are|were)\s+(?:already\s+)?"
    + _SET
    + r"\b(?:\s+to\s+`?(?P<to>[\w.-]+))?"
)
_ALREADY = linear(r"\balready\s+" + _SET + r"\s+" + _NAME)
_MAX_TEXT = 20_000


@dataclass(frozen=True)
class IncidentSetting:
    """The frameworks an incident's code shows, and the options its message says are set."""

    frameworks: frozenset[str]
    options_set: Mapping[str, str]  # option name -> the value the message gives ("" if none)


def _option_like(name: str, value: str | None) -> bool:
    """A word the message says is set is an option when it looks like one: an identifier
    with ``_``/``-``/``.``, an upper-case variable, or a name given with a value."""
    return bool(value) or any(c in name for c in "_-.") or (name.isupper() and len(name) > 2)


def options_already_set(message: str) -> dict[str, str]:
    """Options the message says are already set, enabled or passed, with the value it gives."""
    found: dict[str, str] = {}
    text = message[:_MAX_TEXT]
    for pattern in (_IS_SET, _ALREADY):
        for match in pattern.finditer(text):
            groups = match.groupdict()
            name = match.group("name").strip(".-")
            value = (groups.get("value") or groups.get("to") or "").strip(".")
            if name and _option_like(name, value):
                found.setdefault(name, value)
    return found


def frameworks_in(texts: Iterable[str]) -> set[str]:
    """Frameworks whose packages the texts name as code: ``torch.nn``, ``/tensorflow/``."""
    found: set[str] = set()
    for text in texts:
        text = text[:_MAX_TEXT]
        for pattern in (_MODULE_REF, _PATH_PART):
            for match in pattern.finditer(text):
                if (framework := PACKAGES.get(match.group(1))) is not None:
                    found.add(framework)
    return found


def _error_class_framework(error_type: str) -> set[str]:
    words = _WORD.findall(error_type[:_MAX_TEXT])
    return {ERROR_CLASSES[w.lower()] for w in words[-1:] if w.lower() in ERROR_CLASSES}


def read_setting(
    error_type: str,
    message: str,
    frames: Iterable[Frame] = (),
    inference_context: Mapping[str, Any] | None = None,
) -> IncidentSetting:
    """The incident's frameworks and already-set options, from its own text and context."""
    frame_texts = [
        " ".join(str(frame.get(key) or "") for key in ("module", "filename", "context_line"))
        for frame in frames
    ]
    frameworks = frameworks_in([error_type, message, *frame_texts])
    frameworks |= _error_class_framework(error_type)
    declared = str((inference_context or {}).get("framework") or "").strip().lower()
    if declared in _CONTEXT_NAMES:
        frameworks.add(_CONTEXT_NAMES[declared])
    return IncidentSetting(frozenset(frameworks), options_already_set(message))
