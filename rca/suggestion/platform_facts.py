"""Facts about what the platform under the code lacks: a CPU instruction, an operator's
kernel, the GPU build's own libraries, a library the linker needs.

Failures that look like others and take other fixes:

- ``cpu-instruction-missing``: the process died of SIGILL ("Illegal instruction (core
  dumped)", "signal: illegal instruction", the kernel's "trap invalid opcode", TensorFlow's
  "compiled to use AVX instructions, but these aren't available"). A prebuilt binary uses
  an instruction set (AVX, AVX2, AVX-512) the CPU or its VM lacks; it is not memory. A GPU
  kernel's "an illegal instruction was encountered" (a CUDA error) is not this fact.
- ``custom-operator-unregistered``: ONNX Runtime or the ONNX checker names an operator it
  has no schema or kernel for ("X is not a registered function/op", "No Op registered for
  X", "Could not find an implementation for X(N) node"), or TensorRT's ONNX parser has no
  importer for ("No importer registered for op: X"), and that operator is in a
  non-standard domain (``my_ops:Inverse2``) or is no standard ONNX operator at all
  (:mod:`.onnx_operators`). No opset or provider change helps, nor does constant folding
  (the folder evaluates a subgraph with an ONNX runtime, which has no kernel for the op
  either); the op's library or plugin must be registered (or the op replaced at export).
- ``node-opset-implemented``: ONNX Runtime found no implementation for a standard node
  whose opset the installed release (shown in the texts) implements
  (:mod:`.runtime_opsets`): a kernel for its input types is missing, not its version.
- ``gpu-libraries-not-loaded``: a GPU build is installed but the CUDA libraries it needs
  did not load: TensorFlow's "Could not load dynamic library 'libcudart.so.11.0'" and
  "Cannot dlopen some GPU libraries", ONNX Runtime's "Failed to load library
  libonnxruntime_providers_cuda.so" and "CUDA_PATH is set but CUDA wasn't able to be
  loaded" (not the bare "Failed to create CUDAExecutionProvider",
  which a CPU package shadowing the GPU one prints too), a ``+cu``
  torch wheel with ``torch.cuda.is_available()`` False. Installing "the GPU build" again
  cannot help; the matching CUDA/cuDNN libraries (or their path) can.
- ``linker-library-missing``: the linker ran and names a library it cannot find (GNU ld's
  "ld: cannot find -lcuda", lld's "unable to find library -lcurand", Apple ld's "library not
  found for -lomp", MSVC's "LNK1181: cannot open input file 'cuda.lib'"). The compiler and
  its headers are installed and compiled the code; what is missing is that library, or its
  directory on the linker's path. Installing a compiler or build tools cannot help.

Which steps a fact selects or rules out is runbook data (``fits`` / ``unless``). Every
pattern is linear-time (:mod:`ingest.linear_regex`) over capped lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.onnx_operators import STANDARD_DOMAINS, STANDARD_OPERATORS
from rca.suggestion.runtime_opsets import node_opset_implemented
from rca.suggestion.text_lines import first_lines

__all__ = ["platform_facts", "unregistered_operators"]


_SIGILL = linear(
    r"\billegal instruction\b|\bSIGILL\b|\btrap invalid opcode\b|\binvalid opcode\b"
    r"|\bcompiled to use \w+[^\n]{0,60}instructions?, but these (?:are(?:n.t| not)|is not)"
    r" available",
    ignore_case=True,
)
#: A GPU kernel's fault, reported by CUDA: another failure with the same words.
_GPU_ILLEGAL = linear(
    r"illegal instruction was encountered|cudaErrorIllegalInstruction"
    r"|CUDA_ERROR_ILLEGAL_INSTRUCTION|\bCUDA error\b",
    ignore_case=True,
)
_OPERATOR = r"(?P<op>[A-Za-z_][\w.]*(?::[A-Za-z_][\w.]*)?)"
_UNREGISTERED = (
    linear(rf"{_OPERATOR}(?:\(-?\d+\))?\s+is not a registered function/op"),
    linear(rf"No Op registered for\s+{_OPERATOR}\s+with domain_version"),
    # ONNX Runtime writes "for the node NAME:OpType(N)" (older releases; NAME: only when the
    # node has a name) and "for OpType(N) node with name 'NAME'": before the colon of the
    # first form is the node's name, never a domain, so only the type after it is read.
    linear(
        r"Could not find an implementation for the node (?:\S*:)?"
        r"(?P<op>[A-Za-z_][\w.]*)\(-?\d+\)"
    ),
    linear(rf"Could not find an implementation for (?:node )?{_OPERATOR}\(-?\d+\)"),
    linear(rf"No importer registered for op:\s*{_OPERATOR}"),  # TensorRT's ONNX parser
)
#: Library files and messages of a GPU build that failed to load what it needs.
_GPU_LIBS_FAILED = linear(
    r"Could not load dynamic library\s+'?\"?(?:lib)?(?:cudart|cublas|cublasLt|cufft|curand"
    r"|cusolver|cusparse|cudnn|nvinfer|nccl)\w*"
    r"|Cannot dlopen some GPU libraries"
    r"|Failed to load (?:library|shared library)\s+\S*onnxruntime_providers_(?:cuda|tensorrt)"
    r"|LoadLibrary failed with error \d+[^\n]{0,80}onnxruntime_providers_(?:cuda|tensorrt)"
    r"|\bCUDA wasn.?t able to be loaded",
    ignore_case=True,
)
#: A linker that ran and lacks a library: ``-lNAME`` (GNU ld, gold, lld, Apple ld) or an MSVC
#: ``.lib`` input.
_LINK_LIBRARY = linear(
    r"\bld(?:\.\w+)?(?:\.exe)?:\s*(?:error:\s*)?(?:cannot find|unable to find library"
    r"|library not found for)\s+-l\S"
    r"|\bLNK1181:\s*cannot open input file\s+'?[^'\n]{1,200}\.lib\b",
    ignore_case=True,
)
_CUDA_WHEEL = linear(r"\b\d+\.\d+(?:\.\d+)?\+cu\d{2,3}\b")
_NOT_AVAILABLE = linear(r"cuda\.is_available\(\)[^\n]{0,40}\bFalse\b", ignore_case=True)


def unregistered_operators(lines: Sequence[str]) -> list[str]:
    """The operators (``domain:Op`` or ``Op``) the lines say have no schema or kernel."""
    found: list[str] = []
    for line in lines:
        for pattern in _UNREGISTERED:
            found.extend(match.group("op").rstrip(".") for match in pattern.finditer(line))
    return list(dict.fromkeys(found))[:20]


def _is_custom(operator: str) -> bool:
    """Whether an operator named in a message is outside the standard ONNX domains."""
    domain, _, name = operator.rpartition(":")
    if domain not in STANDARD_DOMAINS:
        return True
    return name.rpartition(".")[2] not in STANDARD_OPERATORS


def platform_facts(texts: Sequence[str]) -> set[str]:
    """The platform facts the texts (message, frame lines, log lines) show."""
    lines = first_lines(texts)
    facts: set[str] = set()
    if any(_SIGILL.search(line) and not _GPU_ILLEGAL.search(line) for line in lines):
        facts.add("cpu-instruction-missing")
    if any(_is_custom(op) for op in unregistered_operators(lines)):
        facts.add("custom-operator-unregistered")
    elif node_opset_implemented(lines):
        facts.add("node-opset-implemented")
    if any(_GPU_LIBS_FAILED.search(line) for line in lines) or (
        any(_CUDA_WHEEL.search(line) for line in lines)
        and any(_NOT_AVAILABLE.search(line) for line in lines)
    ):
        facts.add("gpu-libraries-not-loaded")
    if any(_LINK_LIBRARY.search(line) for line in lines):
        facts.add("linker-library-missing")
    return facts
