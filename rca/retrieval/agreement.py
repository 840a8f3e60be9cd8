"""Whether a runbook agrees with the incident on framework and exception type (pure).

Two pieces of evidence BM25 and the dense cosine weigh only as words among words: which
framework the incident's code runs (a TensorFlow OOM ranked to a PyTorch page), and which
exception class it raised (a page that quotes ``ResourceExhaustedError`` is about that
error, a page that says "resource exhausted" in a gRPC status may not be). Each becomes one
per-runbook value that fusion adds at one weight
(:class:`rca.retrieval.weights.FusionWeights` ``framework``, ``exception_type``).

Frameworks are named in one vocabulary on both sides: the one
:mod:`rca.suggestion.incident_setting` detects in an incident (``pytorch``, ``tensorflow``,
``jax``, ``onnxruntime``, ``tensorrt``, ...). A runbook's come from its front-matter
``frameworks`` when it has them (``keras`` counts as ``tensorflow``, ``flax`` as ``jax``;
names outside the vocabulary, ``transformers`` or ``vllm``, say nothing), else from its own
text read the same way as an incident's (``torch.cuda``, ``tf.config``, ``[TRT]``), so a plain
Markdown page gets them too. The detection lives in ``incident_setting`` (step premises read
it too): one rule, one place; it imports nothing of retrieval's query side.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ingest.linear_regex import compile as linear

if TYPE_CHECKING:
    from ingest.parsing.frames import Frame

__all__ = [
    "class_names",
    "exception_class",
    "incident_frameworks",
    "runbook_frameworks",
    "type_rarity",
]

#: A class name as code writes one: CamelCase, two capitals at least (``TypeError``,
#: ``OSError``, ``ResourceExhaustedError``); a dotted path is read part by part, so
#: ``torch.cuda.OutOfMemoryError`` quotes ``OutOfMemoryError``.
_CLASS_NAME = linear(r"\b[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*\b")


def runbook_frameworks(declared: Iterable[str], text: str) -> frozenset[str]:
    """A runbook's frameworks: its declared ones in the incident side's names when it
    declares any (even if none maps: ``[transformers]`` says "no framework of ours"), else
    the ones its own text names as code."""
    from rca.suggestion.incident_setting import PACKAGES, frameworks_in

    names = [str(name).strip().lower() for name in declared if str(name).strip()]
    if names:
        known = set(PACKAGES.values())
        return frozenset(
            PACKAGES.get(name) or name for name in names if name in PACKAGES or name in known
        )
    return frozenset(frameworks_in([text]))


def incident_frameworks(
    error_type: str,
    message: str,
    frames: Iterable[Frame],
    inference_context: dict[str, object] | None,
    logs: Iterable[object],
) -> frozenset[str]:
    """The frameworks an incident's own code shows, read as step premises read them."""
    from rca.suggestion.incident_setting import log_texts, read_setting

    setting = read_setting(error_type, message, list(frames), inference_context, log_texts(logs))
    return setting.frameworks


def exception_class(error_type_short: str) -> str:
    """The class name an incident's exception is quoted as in a page (``OutOfMemoryError``),
    or ``""`` for a type that is none ("none (warning)", ``Fail``)."""
    name = error_type_short.strip()
    if _CLASS_NAME.fullmatch(name) is None:
        return ""
    return name


def class_names(text: str) -> set[str]:
    """The class names ``text`` quotes (see :data:`_CLASS_NAME`)."""
    return {match[0] for match in _CLASS_NAME.finditer(text)}


def type_rarity(df: int, size: int) -> float:
    """``log(N / df) / log N`` of a type quoted by ``df`` of ``size`` runbooks: 1 for a
    type one page quotes, 0 for one every page does."""
    if not df or size < 2:
        return 0.0
    return math.log(size / df) / math.log(size)
