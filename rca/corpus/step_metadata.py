"""When a remediation step applies: optional metadata written under the step in its runbook.

What we know about a failure lives in its runbook, not in the offline provider's code: a
step says whether it is a training or a serving fix, which frameworks it is written for,
which facts of an incident make it *the* fix, and which facts rule it out. One indented
line under the numbered step, a YAML flow mapping after ``Applies:``::

    2. **Add the missing batch axis (`x.unsqueeze(0)`).** Reason: layers take batches.
       Applies: {fits: [batch-axis-missing]}

Every key is optional, and so is the line: a runbook without it (the ones users bring)
works as before, its steps ranked by their runbook, their place and their words alone.

``mode``
    ``training`` or ``serving``: the step is a fix for that setting only.
``frameworks``
    Lowercase names as they appear in code and logs (``vllm``, ``keras``, ``tf``); the step
    is written for them, so it fits an incident that names one and not one that names only
    another framework.
``fits`` / ``unless``
    Names from :data:`FACTS`: facts read from an incident's shapes, state_dict keys, memory
    figures and code. ``fits``: the step is the fix when the fact holds; ``unless``: the
    fact contradicts the step's premise.
``sets``
    Option or flag names the step turns on (``find_unused_parameters``). Its premise is
    that they are not on yet: an incident whose message says one is already set or
    enabled contradicts it.
``says``
    Words that make a suggestion this step however it is worded ("prefix",
    "model.module.state_dict"): a suggestion whose action holds every word of one of them
    (as :func:`rca.suggestion.incident_facts.terms`) is held to this step's premises, whichever
    runbook it cites, when the step's runbook was given to its author. A rephrased step
    keeps these words where it drops the rest.
``api``
    Frameworks whose API the step is written in (``pytorch``, ``tensorflow``, ``jax``).
    An incident whose frames, modules or error types show only other frameworks
    contradicts it (``torch.flatten`` is no fix for a Keras model).

A step may also carry **framework variants**: indented lines under it, each
``For <framework>[, <framework>]: **Action.** Reason: why.`` with names from
:data:`API_FRAMEWORKS`. A variant is the same fix in that framework's API; it keeps the
step's place and premises, with ``api`` set to its own frameworks. Which wording an incident
gets is chosen in :mod:`rca.suggestion.step_values` from the frameworks its code shows; the
step's metadata lists the variants' frameworks in ``variants`` so that a step written for
``api: [pytorch]`` is not contradicted for an incident whose framework has a variant. A
``For <word>:`` line whose names are not all known frameworks is ordinary text.

``mode``, ``frameworks`` and ``fits`` are soft: they move a step up or down. ``unless``,
``sets`` and ``api`` are premises: a step whose premise the incident contradicts is never
the action, and a suggestion (offline or from an LLM) that restates such a step fails
validation (:mod:`rca.suggestion.premises`). Facts the incident does not show contradict
nothing: an unknown is not a no.

The line is stripped from what retrieval indexes and from the steps shown to a provider;
a bad value fails at load with the file, the step and the field named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from rca.corpus.markdown import remediation_of
from rca.corpus.yaml_text import YAMLError, load_yaml

__all__ = [
    "API_FRAMEWORKS",
    "FACTS",
    "MODES",
    "StepMetadata",
    "StepMetadataError",
    "VARIANT_LINE",
    "metadata_line_count",
    "parse_metadata",
    "remediation_with_metadata",
    "split_metadata",
    "strip_metadata",
    "variant_lines",
]

MODES: frozenset[str] = frozenset({"training", "serving"})

#: The facts a step may name in ``fits`` or ``unless``, each computed from the incident by
#: :mod:`rca.suggestion.incident_facts`. A new kind of fact needs code there;
#: which steps it selects is runbook data.
FACTS: dict[str, str] = {
    "batch-axis-missing": "the input has one axis fewer than expected, the leading (batch) one",
    "trailing-axis-missing": "the input has one axis fewer than expected, the trailing one",
    "same-elements-other-rank": "the input has the expected element count in another rank",
    "input-has-extra-axis": (
        "the input has more axes than the layer accepts (the rank found is above the one"
        " expected): adding an axis makes it worse"
    ),
    "input-lacks-axis": "the input has fewer axes than the layer accepts",
    "batch-axis-present": (
        "the input lacks an axis but the shape shown already has its batch axis: a new leading"
        " (batch) axis leaves every axis one place off"
    ),
    "channel-axis-missing": "the input has its batch axis and lacks the channel (feature) axis",
    "generation-does-not-stop": "generation runs to the maximum length: EOS is never produced",
    "pad-shares-eos-id": "the pad token and the EOS token already share one id",
    "int64-refused": "the message says 64-bit integer (int64) inputs are refused",
    "signal-other-than-bus": "the message names the signal that killed the process: not SIGBUS",
    "label-negative": "the out-of-range class label the message names is negative (padding)",
    "label-not-negative": "the out-of-range class label the message names is not negative",
    "loss-diverging": "the logged loss rose at every step by orders of magnitude, all finite",
    "grayscale-input": "a convolution expecting 3 input channels got 1",
    "rgba-input": "a convolution expecting 3 input channels got 4",
    "channels-last-input": "a convolution got its channels in the last axis",
    "features-folded-into-rows": (
        "a matmul input has one column while the layer takes several, and its row count is a"
        " whole multiple of the layer's width: each sample's values are spread over the rows"
    ),
    "input-smaller-than-one-row": (
        "the whole matmul input holds fewer values than one row of a layer at least 8 times its"
        " width: another tensor, or one read along the wrong axis"
    ),
    "layer-built-in-user-code": (
        "the user's own frames construct the failing layer, or run it from a model's forward"
        " in the user's files"
    ),
    "layer-resize-unsupported": (
        "the matmul shapes say the input is wrong, not the layer: its values folded into rows,"
        " or an input smaller than one row that nothing shows the user's code built the layer for"
    ),
    "path-shown-absolute": (
        "the message or log lines name the file being loaded, and only by an absolute path"
    ),
    "file-found-format-rejected": (
        "the loader reached the file and rejected its contents (its format, header or"
        " encoding: protobuf parsing failed, not a zip archive, HDF5 signature not found,"
        " invalid load key, header too large), and nothing says a file was not found"
    ),
    "file-location-ruled-out": (
        "the message names the loaded file by an absolute path and says the loader read it"
        " and rejected its contents: the file is where the loader looked, so making the path"
        " absolute, checking that it exists or changing the working directory cannot fix it"
    ),
    "state-dict-keys-prefixed": "checkpoint keys are the model's keys with a prefix added or lost",
    "memory-fragmented": "the OOM figures show much memory reserved but unallocated",
    "memory-not-fragmented": "the OOM figures show the reserved memory is really allocated",
    "state-dict-keys-partly-prefixed": (
        "some listed state_dict keys differ by a prefix, but most of them do not"
    ),
    "state-dict-keys-not-prefixed": (
        "the message lists state_dict keys and no prefix pairs a missing with an unexpected one"
    ),
    "state-dict-keys-buffer-like": (
        "the state_dict keys that differ are one or two tensor names repeated across layers,"
        " neither a weight nor a bias (a counter or buffer that one version saves)"
    ),
    "state-dict-keys-only-extra": (
        "the message lists only unexpected state_dict keys: the checkpoint has every key the"
        " model expects, plus others"
    ),
    "state-dict-keys-top-level": (
        "model keys are missing and some unexpected keys are top-level entries (no dot), such"
        " as a training checkpoint's epoch or nested state_dict"
    ),
    "allocation-fits-free": "the OOM's failed allocation is smaller than the free memory reported",
    "memory-held-elsewhere": (
        "the OOM's device is nearly full while this process reserved only a small share of it"
    ),
    "memory-held-by-this-process": (
        "the OOM figures show this process's own allocator holds most of the device memory in"
        " use (what other processes hold could not make room for it)"
    ),
    "layer-pretrained": "the failing model or layer was loaded with pretrained weights",
    "pretrained-weights-loaded": (
        "the code or logs load trained weights (a checkpoint, state_dict or weights file)"
    ),
    "library-version-mismatch": (
        "a line says a library was built with one version of another and found a different one"
    ),
    "required-version-installed": (
        "the version the message requires is the one the text shows installed already"
    ),
    "version-below-requirement": (
        "the text says a named package is older than a version the code requires"
    ),
    "version-above-supported": (
        "the text says a named package is newer than the versions the code supports"
    ),
    "runtime-older-than-build": (
        "a library (or file reader) runs at an older version than the code, engine or file"
        " was built for"
    ),
    "runtime-newer-than-build": (
        "a library runs at a newer version than the code or engine was built for"
    ),
    "driver-older-than-runtime": (
        "the NVIDIA driver is older than the CUDA runtime in use (driver too old, insufficient"
        " for the runtime version)"
    ),
    "library-major-missing": (
        "a binary could not load a shared library at the major version it was linked against"
        " (libcublasLt.so.11: cannot open shared object file)"
    ),
    "public-name-missing": "a name imported from a package's top or first-level module is missing",
    "internal-name-missing": "a name imported from a package's internal module is missing",
    "library-call-rejects-argument": (
        "an installed package's own code passes a keyword argument the function it calls"
        " does not accept (its frame raised the TypeError)"
    ),
    "module-name-missing": "a package's module has no attribute the code uses",
    "name-used-by-other-package": (
        "the missing name is used by another installed package's code, not the user's"
    ),
    "argument-removed-by-release": (
        "a keyword argument a library's code passes was, the message or logs say, removed or"
        " deprecated by a release of the library it calls"
    ),
    "removal-unstated": (
        "an argument or module name is missing and neither message nor logs say a release"
        " removed or deprecated it"
    ),
    "name-removed-by-release": (
        "the message or logs say a release removed or deprecated the missing name (a module's"
        " attribute, or a name that cannot be imported)"
    ),
    "extension-symbol-missing": "a compiled extension under site-packages has an undefined symbol",
    "autograd-off-in-code": "the failing code already runs under torch.no_grad / inference_mode",
    "cuda-graphs-captured": "the logs show CUDA graphs being captured",
    "gpu-support-not-built": (
        "the installed build has no GPU support (it says so, or lists only CPU providers)"
    ),
    "warning-only": "the message is a warning and no line of the incident shows an error",
    "error-raised": "the message is an error: an exception, a traceback or an error log line",
    "model-already-quantized": (
        "the model in use is quantized already (a GPTQ/AWQ/GGUF/4-bit checkpoint or load)"
    ),
    "checkpoint-tensors-empty": (
        "the checkpoint's tensors are empty (torch.Size([0])): partitioned weights saved"
        " without gathering"
    ),
    "model-tensors-empty": (
        "the model's tensors are empty (torch.Size([0])): the model was built partitioned"
    ),
    "state-dict-prefix-on-model-side": (
        "the model's keys carry the prefix and the checkpoint's do not: the model was wrapped"
        " after the checkpoint was saved unwrapped"
    ),
    "state-dict-keys-all-prefixed": (
        "every state_dict key shown differs by one prefix (added, lost or swapped), so a"
        " non-strict load would match none of them (read from the keys shown; lists may be cut)"
    ),
    "state-dict-prefix-on-checkpoint-side": (
        "the checkpoint's keys carry the prefix and the model's do not: a wrapped model's save"
    ),
    "runs-training": "the failing code is a training run (backward, optimizer step, fit, Trainer)",
    "runs-serving": (
        "the failing code is a serving or inference run (an engine, generate, predict, requests)"
        " and shows no training loop"
    ),
    "cpu-instruction-missing": "SIGILL: the CPU lacks an instruction set (AVX) the binary uses",
    "custom-operator-unregistered": (
        "the ONNX model uses an operator outside the standard ONNX domains that has no"
        " registered implementation (a custom op)"
    ),
    "node-opset-implemented": "the runtime shown knows the node's opset: its types lack a kernel",
    "gpu-libraries-not-loaded": "an installed GPU build could not load its CUDA/cuDNN libraries",
    "linker-library-missing": "the linker ran and cannot find a library (`ld: cannot find -lcuda`)",
    "layers-already-built": "every Keras layer the loading error lists is shown `built=True`",
    "nccl-debug-shown": "NCCL's debug lines (`NCCL INFO`, `NCCL WARN`) are in the incident",
    "parser-errors-shown": "the errors of TensorRT's ONNX parser (`ModelImporter.cpp`) are shown",
    "parser-error-not-batch": "the ONNX parser's errors are shown, none about the explicit batch",
    "size-mismatch-not-vocab": (
        "no size-mismatched tensor named is a vocabulary matrix differing in its rows (tokens)"
    ),
}

#: The frameworks ``api`` may name: those :mod:`rca.suggestion.incident_setting` detects.
API_FRAMEWORKS: frozenset[str] = frozenset(
    {"pytorch", "tensorflow", "jax", "paddle", "mxnet", "onnxruntime", "tensorrt"}
)

_KEYS = ("mode", "frameworks", "fits", "unless", "sets", "api", "says")
_OPTION = re.compile(r"^[A-Za-z_-][A-Za-z0-9_.-]{0,79}$")
# Runbook text only (operator-shipped files), never incident text: plain re is fine.
_LINE = re.compile(r"^[ \t]+Applies:[ \t]*(?P<value>.*?)[ \t]*$", re.MULTILINE)
_STRIP = re.compile(r"\n[ \t]+Applies:[^\n]*")
_FRAMEWORK = re.compile(r"^[a-z0-9][a-z0-9_.+-]{0,39}$")
#: ``For tensorflow: **...**`` / ``For tensorflow, jax: ...``, indented under a step.
VARIANT_LINE = re.compile(
    r"^[ \t]+For[ \t]+(?P<names>[a-z][a-z0-9_]*(?:[ \t]*,[ \t]*[a-z][a-z0-9_]*)*)[ \t]*:"
    r"[ \t]*(?P<text>\S.*?)[ \t]*$",
    re.MULTILINE,
)


def variant_lines(step: str) -> list[tuple[tuple[str, ...], str, re.Match[str]]]:
    """The framework variants of a step: (frameworks, wording, the line's match) each, for
    ``For x:`` lines whose names are all known frameworks."""
    found = []
    for match in VARIANT_LINE.finditer(step):
        names = tuple(name.strip() for name in match.group("names").split(","))
        if all(name in API_FRAMEWORKS for name in names):
            found.append((names, match.group("text"), match))
    return found


class StepMetadataError(ValueError):
    """An ``Applies:`` line is malformed; the message says which field and why."""


@dataclass(frozen=True)
class StepMetadata:
    """When one step applies; the defaults say nothing, so the step competes on its words."""

    mode: str | None = None
    frameworks: tuple[str, ...] = ()
    fits: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()
    api: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()  # frameworks with their own wording (``For x:`` lines)
    says: tuple[str, ...] = ()

    @property
    def has_premises(self) -> bool:
        """Whether any condition can contradict the step (``unless``, ``sets``, ``api``)."""
        return bool(self.unless or self.sets or self.api)


def _names(mapping: dict[str, Any], key: str, lower: bool = True) -> tuple[str, ...]:
    value = mapping.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise StepMetadataError(f"'{key}' must be a list of names, got {value!r}")
    return tuple(dict.fromkeys(item.strip().lower() if lower else item.strip() for item in value))


def parse_metadata(value: str) -> StepMetadata:
    """The metadata of one ``Applies:`` value (a YAML flow mapping)."""
    try:
        mapping = load_yaml(value)
    except YAMLError as exc:
        raise StepMetadataError(f"'Applies:' is not a YAML mapping: {exc}") from exc
    if not isinstance(mapping, dict):
        raise StepMetadataError(f"'Applies:' must be a mapping like {{mode: training}}: {value!r}")
    unknown = sorted(str(key) for key in mapping if key not in _KEYS)
    if unknown:
        raise StepMetadataError(f"unknown key {unknown[0]!r}; known: {', '.join(_KEYS)}")
    mode = mapping.get("mode")
    if mode is not None and mode not in MODES:
        raise StepMetadataError(f"'mode' must be one of {', '.join(sorted(MODES))}, got {mode!r}")
    frameworks = _names(mapping, "frameworks")
    for name in frameworks:
        if not _FRAMEWORK.match(name):
            raise StepMetadataError(f"'frameworks': invalid name {name!r}")
    fits, unless = _names(mapping, "fits"), _names(mapping, "unless")
    for key, facts in (("fits", fits), ("unless", unless)):
        for fact in facts:
            if fact not in FACTS:
                raise StepMetadataError(
                    f"'{key}': unknown fact {fact!r}; known: {', '.join(sorted(FACTS))}"
                )
    sets = _names(mapping, "sets", lower=False)
    for option in sets:
        if not _OPTION.match(option):
            raise StepMetadataError(f"'sets': invalid option name {option!r}")
    api = _names(mapping, "api")
    for name in api:
        if name not in API_FRAMEWORKS:
            raise StepMetadataError(
                f"'api': unknown framework {name!r}; known: {', '.join(sorted(API_FRAMEWORKS))}"
            )
    says = _names(mapping, "says")
    if any(not phrase for phrase in says):
        raise StepMetadataError("'says': empty phrase")
    return StepMetadata(mode, frameworks, fits, unless, sets, api, says=says)


def split_metadata(step: str) -> tuple[str, StepMetadata]:
    """A step's text without its ``Applies:`` line, and the metadata that line gives."""
    lines = list(_LINE.finditer(step))
    if len(lines) > 1:
        raise StepMetadataError("a step has at most one 'Applies:' line")
    variants = tuple(dict.fromkeys(n for names, _, _ in variant_lines(step) for n in names))
    if not lines:
        return step, StepMetadata(variants=variants)
    meta = parse_metadata(lines[0].group("value"))
    return strip_metadata(step), replace(meta, variants=variants)


def metadata_line_count(text: str) -> int:
    """How many ``Applies:`` lines ``text`` has (a body's must all sit under steps)."""
    return len(_LINE.findall(text))


def strip_metadata(text: str) -> str:
    """``text`` without its ``Applies:`` lines: what retrieval indexes and a provider reads."""
    return _STRIP.sub("", text)


def remediation_with_metadata(body: str) -> list[tuple[str, StepMetadata]]:
    """The numbered Remediation steps of a body, each without and with its metadata."""
    return [split_metadata(step) for step in remediation_of(body)]
