"""The incident's setting as premises see it: which frameworks its code runs, which options
its message says are already set.

Both are read generically. Frameworks come from where code names its own package: dotted
module paths (``tf.config``, ``jnp.where``: the packages' customary import aliases too) and
path parts (``/tensorflow/``, a C++ log's ``tensorflow/core/...``) in the error type, the
frames, the log lines and the message; a logger's own bracketed tag (``[TRT]``,
``[ONNXRuntimeError]``); a package named with its version the way pip and wheels print it
(``jaxlib==0.4.29``, ``TensorRT-8.5.1.7``, a ``pip list`` row); a framework's command-line
tool run with options (``trtexec --onnx=...``); an environment variable only one framework
reads (``XLA_PYTHON_CLIENT_PREALLOCATE``, ``TF_FORCE_GPU_ALLOW_GROWTH``); the package named
in the error type; the
inference context's ``framework`` field; and the error classes only one framework raises
(its documented error module: ``tf.errors``, ``jax.errors``). Options come from the
message's own sentences that say an option is set, enabled or passed already ("Since
`find_unused_parameters=True` is enabled", "max_length is already set to 20"; not when the
sentence advises or makes it a condition first: "make sure CUDA_PATH is set", "only when
X is set"; not when the value is empty: "set to an empty string"), and from
the launch commands in the log lines (``vllm serve m --enforce-eager``,
``docker run --ipc=host ...``): a flag on the command that ran is set (``-`` read as ``_``,
so ``--trust-remote-code`` is ``trust_remote_code``). Nothing here knows a runbook, a step
or a case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ingest.linear_regex import compile as linear
from ingest.parsing.frames import Frame
from rca.retrieval.frame_paths import compiled_sources, evidence_path, evidence_text

__all__ = [
    "IncidentSetting",
    "frameworks_in",
    "options_already_set",
    "options_in_commands",
    "read_setting",
]

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
#: Customary import aliases (``import jax.numpy as jnp``, ``import tensorrt as trt``): in a
#: dotted reference they name their package as surely as the full name does.
ALIASES: Mapping[str, str] = {
    "jnp": "jax", "lax": "jax", "tfa": "tensorflow", "tfp": "tensorflow",
    "trt": "tensorrt", "ort": "onnxruntime",
}  # fmt: skip
#: Error classes that only one framework raises (their module path is often not printed):
#: TensorFlow's ``tf.errors`` and JAX's ``jax.errors`` classes whose names no builtin or
#: other common library uses.
ERROR_CLASSES: Mapping[str, str] = {
    "resourceexhaustederror": "tensorflow",
    "invalidargumenterror": "tensorflow",
    "failedpreconditionerror": "tensorflow",
    "unknownerror": "tensorflow",
    "outofrangeerror": "tensorflow",
    "unimplementederror": "tensorflow",
    "datalosserror": "tensorflow",
    "xlaruntimeerror": "jax",
    "concretizationtypeerror": "jax",
    "tracerarrayconversionerror": "jax",
    "tracerboolconversionerror": "jax",
    "tracerintegerconversionerror": "jax",
    "unexpectedtracererror": "jax",
    "outofmemoryerror": "pytorch",
}
#: Tags a framework's own logger prints in brackets, lowercased (``[TRT]``, ``[TensorRT]``).
LOG_TAGS: Mapping[str, str] = {
    "trt": "tensorrt", "tensorrt": "tensorrt", "onnxruntimeerror": "onnxruntime",
    "onnxruntime": "onnxruntime", "tensorflow": "tensorflow",
}  # fmt: skip
#: Command-line tools of one framework, recognised when run with an option.
COMMANDS: Mapping[str, str] = {
    "trtexec": "tensorrt", "polygraphy": "tensorrt", "saved_model_cli": "tensorflow",
}  # fmt: skip
#: Environment variables that only one framework reads, by name prefix, as messages and log
#: lines print them (``XLA_PYTHON_CLIENT_PREALLOCATE=false``, ``JAX_PLATFORMS``,
#: ``TF_FORCE_GPU_ALLOW_GROWTH``, ``TF_GPU_ALLOCATOR=cuda_malloc_async``,
#: ``PYTORCH_CUDA_ALLOC_CONF``). ``TF_CPP_*`` is left out: JAX's own warnings tell users to set
#: it too.
ENV_PREFIXES: Mapping[str, str] = {
    "XLA_PYTHON_CLIENT_": "jax", "JAX_": "jax",
    "TF_FORCE_GPU_": "tensorflow", "TF_GPU_ALLOCATOR": "tensorflow", "TF_KERAS": "tensorflow",
    "TF_USE_LEGACY_KERAS": "tensorflow", "TF_ENABLE_ONEDNN_OPTS": "tensorflow",
    "TF_XLA_FLAGS": "tensorflow",
    "PYTORCH_": "pytorch", "TORCH_": "pytorch",
}  # fmt: skip
#: What the inference context's ``framework`` field may say, normalised.
_CONTEXT_NAMES: Mapping[str, str] = {**PACKAGES, "pytorch": "pytorch", "tensorflow": "tensorflow"}

_MODULE_REF = linear(r"(?:^|[^\w.])([A-Za-z_][A-Za-z0-9_]*)\.[A-Za-z_]")
#: A path part: a name after a slash, or starting a token, that a slash follows (checked in
#: code: the pattern cannot look ahead, and must not consume the slash the next part needs).
_PATH_PART = linear(r"(?:^|[\s/\\\"'(\[=])([A-Za-z_][A-Za-z0-9_]*)")
_LOG_TAG = linear(r"\[([A-Za-z][A-Za-z0-9_]*)(?:\s+v?\d[\w.]*)?\]")
#: ``name==1.2``, ``name-1.2`` (wheels, "Successfully installed"), ``name   1.2`` (pip list).
_VERSIONED = linear(
    r"(?:^|[^\w.-])([A-Za-z_][A-Za-z0-9_]*)(?:\[[\w,]+\])?(?:==|-|\s{2,})v?\d+\.\d+"
)
_COMMAND = linear(r"(?:^|[^\w.-])([a-z_]+)(?:\.exe)?\s+--?[a-zA-Z]")
_WORD = linear(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV_NAME = linear(r"(?:^|[^A-Za-z0-9_])([A-Z][A-Z0-9]*_[A-Z0-9_]+)")
_NAME = r"`?-{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)`?(?:\s*(?:=|:)\s*`?(?P<value>[\w./:-]+)`?)?"
_SET = r"(?:set|enabled|turned on|passed|specified|given|true|on)"
#: "<option>[=<value>] is (already) set/enabled", "already set <option>=<value>".
_IS_SET = linear(
    _NAME
    + r"\s+(?:is|was|has been|are|were)\s+(?:already\s+)?"
    + _SET
    + r"\b(?:\s+to\s+(?P<to>[^\s,;]+(?:\s+[A-Za-z]+)?))?"
)
_ALREADY = linear(r"\balready\s+" + _SET + r"\s+" + _NAME)
_MAX_TEXT = 20_000
#: Sentence ends (a newline too: log lines), and the words after which a sentence advises or
#: sets a condition rather than reports ("make sure CUDA_PATH is set", "if X is set", "only
#: when X is set to ...", "you must already set X").
_SENTENCE_END = linear(r"[.!?;](?:\s|$)|\n")
_HEDGE = linear(
    r"\b(?:make sure|ensure|check|verify|confirm|if|unless|when|whenever|once|only|whether"
    r"|try|should|must|need|needs|please|consider|recommend|recommended|example|e\.g)\b",
    ignore_case=True,
)
#: What a ``set to`` may be followed by that is no value: an article before a description
#: ("set to the CUDA 12 install": set, value not shown).
_NOT_A_VALUE = frozenset({"the", "a", "an", "your", "its", "their", "this", "that", "some", "any"})
#: An empty value ("set to an empty string", ``X=''``): the variable holds nothing.
_EMPTY = frozenset({"''", '""', "``", "empty"})
#: A launch command: a line that starts (after a shell prompt and ``VAR=value`` assignments)
#: with a lower-case program and at most three words before its first ``--flag``. A log
#: line that quotes a flag as advice ("INFO ... use '--enforce-eager' in the CLI") starts
#: with a level or a timestamp and is not one.
_COMMAND_LINE = linear(
    r"^\s*(?:[$>#]\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*[a-z.~/][\w.~/-]*"
    r"(?:\s+(?:[^\s-]\S*|-[A-Za-z]\b)){0,3}\s+--[A-Za-z]"
)
_FLAG = linear(
    r"(?:^|\s)--(?P<name>[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9])(?:[= ](?P<value>[^\s-][^\s]*))?"
)
_MAX_COMMAND_LINES = 50


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
    """Options the message reports already set, enabled or passed, with the value it gives
    (``""`` when it shows none). A sentence that advises or sets a condition before naming
    the option ("make sure CUDA_PATH is set", "if X is set") reports nothing: a step that
    sets an advised option must stay possible."""
    found: dict[str, str] = {}
    for sentence in _sentences(message[:_MAX_TEXT]):
        for pattern in (_IS_SET, _ALREADY):
            for match in pattern.finditer(sentence):
                if _HEDGE.search(sentence[: match.start()]):  # advice or a condition
                    continue
                groups = match.groupdict()
                name = match.group("name").strip(".-")
                value = _value(groups.get("value") or groups.get("to") or "")
                if name and value is not None and _option_like(name, value):
                    found.setdefault(name, value)
    return found


def _sentences(text: str) -> list[str]:
    """``text`` cut at its sentence ends, so that a hedge counts only in its own sentence."""
    cuts = [0, *(match.end() for match in _SENTENCE_END.finditer(text)), len(text)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def _value(given: str) -> str | None:
    """The value as a report gives it: ``""`` when not shown ("set to the toolkit's path"),
    None when empty ("set to an empty string", ``=''``): an empty variable is no setting."""
    words = given.split()[:2]
    if words and words[0].strip("`.") in _EMPTY:
        return None
    first = words[0].strip("`'\".)") if words else ""
    if first.lower() in _NOT_A_VALUE:
        return None if len(words) > 1 and words[1].lower() in _EMPTY else ""
    return first


def options_in_commands(lines: Iterable[str]) -> dict[str, str]:
    """Flags of the launch commands among ``lines``, with the value each is given ("" for a
    switch), named with ``_`` for ``-``."""
    found: dict[str, str] = {}
    commands = (line[:_MAX_TEXT] for line in lines if _COMMAND_LINE.search(line[:_MAX_TEXT]))
    for _, line in zip(range(_MAX_COMMAND_LINES), commands, strict=False):
        for match in _FLAG.finditer(line):
            value = (match.group("value") or "").strip("'\"")
            name = match.group("name").replace("-", "_")
            if _option_like(name, value):  # a bare ``--fp16`` is too plain a word to find
                found.setdefault(name, value)
    return found


def _package(name: str) -> str | None:
    """The framework of a package name or import alias as code spells it."""
    return PACKAGES.get(name) or ALIASES.get(name) or PACKAGES.get(name.lower())


def frameworks_in(texts: Iterable[str]) -> set[str]:
    """Frameworks whose packages the texts name as code: ``torch.nn``, ``/tensorflow/``,
    ``jnp.where``, ``[TRT]``, ``jaxlib==0.4.29``, ``trtexec --onnx``, and environment
    variables only one framework reads (``XLA_PYTHON_CLIENT_PREALLOCATE``)."""
    found: set[str] = set()
    for text in texts:
        text = text[:_MAX_TEXT]
        for match in _MODULE_REF.finditer(text):
            if (framework := _package(match.group(1))) is not None:
                found.add(framework)
        for match in _PATH_PART.finditer(text):
            framework = PACKAGES.get(match.group(1))
            if framework is not None and text[match.end() : match.end() + 1] in ("/", "\\"):
                found.add(framework)
        for match in _LOG_TAG.finditer(text):
            if (framework := LOG_TAGS.get(match.group(1).lower())) is not None:
                found.add(framework)
        for match in _VERSIONED.finditer(text):
            if (framework := PACKAGES.get(match.group(1).lower())) is not None:
                found.add(framework)
        for match in _COMMAND.finditer(text):
            if (framework := COMMANDS.get(match.group(1))) is not None:
                found.add(framework)
        for match in _ENV_NAME.finditer(text):
            found.update(
                fw for prefix, fw in ENV_PREFIXES.items() if match.group(1).startswith(prefix)
            )
    return found


def _error_type_frameworks(error_type: str) -> set[str]:
    """The framework of a framework-only error class, and any package the type names
    (``RuntimeError (onnxruntime InvalidArgument)``, ``none (TensorFlow warning)``)."""
    words = _WORD.findall(error_type[:_MAX_TEXT])
    found = {ERROR_CLASSES[w.lower()] for w in words if w.lower() in ERROR_CLASSES}
    # Full package names only: an alias ("tf", "trt") as a bare word is too short to trust.
    return found | {PACKAGES[w.lower()] for w in words if len(w) > 2 and w.lower() in PACKAGES}


def _source_frameworks(texts: Iterable[str]) -> set[str]:
    """Frameworks whose own C, C++ or CUDA source a message or log line names
    (``I tensorflow/core/platform/cpu_feature_guard.cc:182]``,
    ``/onnxruntime_src/onnxruntime/core/session/inference_session.cc``): a package among
    the directories of such a file is the library's tree
    (:func:`~rca.retrieval.frame_paths.compiled_sources`)."""
    return {
        PACKAGES[part]
        for text in texts
        for path in compiled_sources(text[:_MAX_TEXT])
        for part in path.split("/")[:-1]
        if part in PACKAGES
    }


def read_setting(
    error_type: str,
    message: str,
    frames: Iterable[Frame] = (),
    inference_context: Mapping[str, Any] | None = None,
    logs: Iterable[str] = (),
) -> IncidentSetting:
    """The incident's frameworks and already-set options, from its own text, log lines and
    context."""
    logs = list(logs)
    frame_texts = [  # a directory of the user's ("transformers-demo/") names no framework
        " ".join(
            [
                str(frame.get("module") or ""),
                evidence_path(str(frame.get("filename") or "")),
                str(frame.get("context_line") or ""),
            ]
        )
        for frame in frames
    ]
    # A path's directories are the user's ("-v /data/Triton/repo"): read as frames' are,
    # but for a compiled library's own source file, whose directories are its package's.
    texts = [evidence_text(text) for text in (message, *logs)]
    frameworks = frameworks_in([error_type, *texts, *frame_texts])
    frameworks |= _source_frameworks((message, *logs))
    frameworks |= _error_type_frameworks(error_type)
    declared = str((inference_context or {}).get("framework") or "").strip().lower()
    if declared in _CONTEXT_NAMES:
        frameworks.add(_CONTEXT_NAMES[declared])
    options = options_in_commands(logs) | options_already_set(message)  # the message wins
    return IncidentSetting(frozenset(frameworks), options)


def log_texts(logs: Iterable[Any]) -> list[str]:
    """The text of each log entry (a dict's ``message``, else the entry itself)."""
    return [str(e.get("message") if isinstance(e, dict) else e) for e in logs]


def setting_of(ctx: Any) -> IncidentSetting:
    """:func:`read_setting` of an analysis context (anything with the incident's error type,
    message, frames, inference context and logs): one reading for premises and wording."""
    return read_setting(
        ctx.error_type or "",
        ctx.message or "",
        ctx.frames,
        ctx.inference_context,
        log_texts(ctx.logs),
    )
