"""Facts read from an incident's own figures: shapes, state_dict keys, memory numbers, code.

State_dict key lists are read by :mod:`rca.suggestion.state_dict_keys`, an OOM message's
memory figures by :mod:`rca.suggestion.oom_figures`, whether a matmul's shapes support
resizing the layer by :mod:`rca.suggestion.layer_width`, where the loaded file is and whether
its loader rejected its contents by :mod:`rca.suggestion.loaded_file`.

Each fact has a name from :data:`rca.corpus.step_metadata.FACTS`; which steps a fact makes
the fix (``fits``) or contradicts (``unless``) is written in the runbooks, not here. This
module only reads the incident, generically: no fact names a framework, a model or a case.
The incident's setting (its frameworks, the options it says are set) is
:mod:`rca.suggestion.incident_setting`; both are combined by :mod:`rca.suggestion.premises`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from ingest.parsing.frames import Frame
from ingest.parsing.shape_ops import op_kind
from ingest.parsing.shapes import ShapeDiff
from rca.retrieval.tokens import tokenize
from rca.suggestion.axis_position import axis_position_facts
from rca.suggestion.built_layers import built_layer_facts
from rca.suggestion.environment_facts import environment_facts, rejected_arguments
from rca.suggestion.int64_refused import int64_facts
from rca.suggestion.keras_major import keras_major_facts
from rca.suggestion.kernel_origin import kernel_origin_facts
from rca.suggestion.label_values import label_facts
from rca.suggestion.layer_width import layer_width_facts
from rca.suggestion.loaded_file import loaded_file_facts
from rca.suggestion.loss_trend import loss_trend_facts
from rca.suggestion.oom_figures import (
    FRAGMENTED_SHARE,
    HELD_ELSEWHERE_SHARE,
    memory_facts,
    read_oom_figures,
)
from rca.suggestion.pad_eos import pad_eos_facts
from rca.suggestion.platform_facts import platform_facts
from rca.suggestion.projection_layout import layout_facts
from rca.suggestion.rank_direction import rank_facts
from rca.suggestion.release_regression import release_regression_facts
from rca.suggestion.shown_diagnostics import parser_cause_facts, shown_diagnostic_facts
from rca.suggestion.signal_names import signal_facts
from rca.suggestion.state_dict_keys import key_facts, key_prefix
from rca.suggestion.version_pairs import version_facts
from rca.suggestion.vocab_rows import vocab_row_facts

__all__ = [
    "FRAGMENTED_SHARE",
    "HELD_ELSEWHERE_SHARE",
    "fact_words",
    "incident_facts",
    "key_prefix",
    "terms",
]

_MAX_TEXT = 20_000
_MAX_TEXTS = 200
_PRETRAINED = linear(r"pretrained", ignore_case=True)
_ES_PLURAL = linear(r"(?:ss|ch|sh|x|z)e$")
#: Parts of tensor names that every model has: naming them says nothing about a step.
_GENERIC_TENSOR_WORDS = frozenset({"weight", "bias", "model", "module", "tensor", "input"})


#: Texts up to this long are remembered by :func:`terms`: runbook step wordings, read again
#: for every candidate a ranking and its validation weigh (a third of ranking time was
#: tokenising the same few hundred steps). Longer texts (an incident's) are not kept.
_REMEMBERED_CHARS = 2000


def terms(text: str) -> list[str]:
    """:func:`rca.retrieval.tokens.tokenize`, with "-es" plurals folded too ("losses" -> "loss")."""
    if len(text) <= _REMEMBERED_CHARS:
        return list(_remembered_terms(text))
    return _terms(text)


@functools.lru_cache(maxsize=8192)
def _remembered_terms(text: str) -> tuple[str, ...]:
    return tuple(_terms(text))


def _terms(text: str) -> list[str]:
    return [token[:-1] if _ES_PLURAL.search(token) else token for token in tokenize(text)]


def _concrete_matches(expected: Sequence[int | None], actual: Sequence[int | None]) -> int | None:
    """Equal concrete dimensions of two aligned shapes; None when a concrete pair differs."""
    count = 0
    for e, a in zip(expected, actual, strict=True):
        if e is None or a is None:
            continue
        if e != a:
            return None
        count += 1
    return count


def _shape_facts(diff: ShapeDiff) -> set[str]:
    """What one shape mismatch says about its cause."""
    facts: set[str] = set()
    expected, actual = list(diff.get("expected") or []), list(diff.get("actual") or [])
    if len(actual) == len(expected) - 1:
        batch = _concrete_matches(expected[1:], actual)  # the leading (batch) axis missing
        trailing = _concrete_matches(expected[:-1], actual)  # the trailing axis missing
        if batch is not None and (trailing is None or batch > trailing):
            facts.add("batch-axis-missing")
        elif trailing is not None and (batch is None or trailing > batch):
            facts.add("trailing-axis-missing")
    known_e = [d for d in expected if isinstance(d, int)]
    known_a = [d for d in actual if isinstance(d, int)]
    if (
        len(expected) != len(actual)
        and known_e
        and known_a
        and len(known_e) != len(known_a)
        and math.prod(known_e) == math.prod(known_a)
    ):
        facts.add("same-elements-other-rank")
    if op_kind(diff.get("op")) == "conv" and len(expected) > 2 and len(actual) == len(expected):
        # Channels sit at dim 1 of a batch, at dim 0 of one unbatched sample: the dim that differs.
        at = 0 if expected[1] == actual[1] and expected[0] != actual[0] else 1
        need, got = expected[at], actual[at]
        if need == 3 and got == 1:
            facts.add("grayscale-input")
        elif need == 3 and got == 4:
            facts.add("rgba-input")
        elif need is not None and actual[-1] == need:
            facts.add("channels-last-input")
    return facts


def incident_facts(
    message: str,
    diffs: Sequence[ShapeDiff],
    code: Sequence[str] = (),
    frames: Sequence[Frame] = (),
    logs: Sequence[str] = (),
) -> frozenset[str]:
    """The :data:`~rca.corpus.step_metadata.FACTS` this incident shows; ``code`` is the text
    of its frames and logs (where a pretrained model is loaded, say), ``frames`` the frames
    themselves (whether the failing layer is the user's own: :mod:`.layer_width`), ``logs``
    its log lines alone (where the loaded file is, what its loader said: :mod:`.loaded_file`)."""
    facts = memory_facts(read_oom_figures(message)) | key_facts(message)
    facts |= rank_facts(message, diffs)  # which way an input's rank is off
    for diff in diffs[:2]:
        facts |= _shape_facts(diff)
    facts |= layer_width_facts(diffs, frames, [message, *logs])
    facts |= loaded_file_facts([message, *logs])
    facts |= axis_position_facts(message, diffs)  # the batch axis there, the channel missing
    shown = [message, *logs]
    facts |= pad_eos_facts(shown, code) | int64_facts(shown) | signal_facts(shown)
    facts |= label_facts(shown)  # a negative (padding) label or one past the class count
    facts |= built_layer_facts(shown) | keras_major_facts(shown)  # built=True, Keras 3 runs
    facts |= shown_diagnostic_facts(shown)  # NCCL debug lines, the ONNX parser's errors
    facts |= parser_cause_facts(shown)  # the parser's errors name no batch dimension
    facts |= kernel_origin_facts(shown)  # an extension's own check reported the CUDA error
    facts |= loss_trend_facts(logs)  # the logged loss rose step after step
    facts |= vocab_row_facts(shown)  # no size-mismatched tensor is a vocabulary's
    facts |= layout_facts(shown)  # a fused attention projection, or separate ones
    facts |= release_regression_facts(shown)  # "works in 0.2.6 but fails in 0.2.7"
    texts = [text[:_MAX_TEXT] for text in (message, *code[:_MAX_TEXTS])]
    if any(_PRETRAINED.search(text) for text in texts):
        facts.add("layer-pretrained")
    facts |= environment_facts(texts) | platform_facts(texts)
    return frozenset(facts | version_facts(texts[0], texts[1:]))


def fact_words(message: str, diffs: Sequence[ShapeDiff]) -> frozenset[str]:
    """Words a fitting step names: the mismatched tensor's own name ("embed_tokens", "fc"),
    the state_dict key prefix ("module") and the arguments the message says the API rejects
    ("lr" in "Argument(s) not recognized: {'lr': 0.002}")."""
    names = " ".join(str(diff.get("tensor") or "") for diff in diffs[:2])
    words = [word for word in terms(names) if word not in _GENERIC_TENSOR_WORDS]
    prefix = key_prefix(message)
    rejected = [word for name in rejected_arguments(message) for word in terms(name)]
    return frozenset(words + (terms(prefix) if prefix else []) + rejected)
