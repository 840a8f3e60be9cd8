"""Facts read from an incident's own figures: shapes, state_dict keys, memory numbers, code.

State_dict key lists are read by :mod:`rca.suggestion.state_dict_keys`.

Each fact has a name from :data:`rca.corpus.step_metadata.FACTS`; which steps a fact makes
the fix (``fits``) or contradicts (``unless``) is written in the runbooks, not here. This
module only reads the incident, generically: no fact names a framework, a model or a case.
The incident's setting (its frameworks, the options it says are set) is
:mod:`rca.suggestion.incident_setting`; both are combined by :mod:`rca.suggestion.premises`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear
from ingest.parsing.shapes import ShapeDiff
from rca.retrieval.tokens import tokenize
from rca.suggestion.environment_facts import environment_facts, rejected_arguments
from rca.suggestion.state_dict_keys import key_facts, key_prefix
from rca.suggestion.version_pairs import version_facts

__all__ = [
    "FRAGMENTED_SHARE",
    "HELD_ELSEWHERE_SHARE",
    "fact_words",
    "incident_facts",
    "key_prefix",
    "terms",
]

FRAGMENTED_SHARE = 0.25
"""An OOM is fragmentation when memory reserved but unallocated is at least this share of
the allocated memory (PyTorch's own hint fires on a similar ratio)."""

HELD_ELSEWHERE_SHARE = 0.5
"""Memory is held outside the failing process when the device's capacity minus what it says
is free minus what this process reserved is at least this share of the capacity: another
process (or another framework in the same one) owns most of the device. Half, so that the
fact holds only when the outside share dominates; not tuned."""

_SIZE = r"(?P<{name}>\d+(?:\.\d+)?)\s*(?P<{name}_unit>[KMGT]iB|bytes)"
_OOM_NEW = linear(
    _SIZE.format(name="alloc")
    + r" is allocated by PyTorch, and "
    + _SIZE.format(name="spare")
    + r" is reserved by PyTorch but unallocated"
)
_OOM_OLD = linear(
    _SIZE.format(name="alloc")
    + r" already allocated;.*?"
    + _SIZE.format(name="reserved")
    + r" reserved in total by PyTorch"
)
_TRIED = linear(r"Tried to allocate " + _SIZE.format(name="tried"))
_FREE = linear(_SIZE.format(name="free") + r"(?: is)? free\b")
_CAPACITY_NEW = linear(r"total capacity of " + _SIZE.format(name="total"))
_CAPACITY_OLD = linear(_SIZE.format(name="total") + r" total capacity")
_UNITS = {"bytes": 1 / (1024 * 1024), "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0, "TiB": 1024.0**2}
_MAX_TEXT = 20_000
_MAX_TEXTS = 200
_PRETRAINED = linear(r"pretrained", ignore_case=True)
_ES_PLURAL = linear(r"(?:ss|ch|sh|x|z)e$")
#: Parts of tensor names that every model has: naming them says nothing about a step.
_GENERIC_TENSOR_WORDS = frozenset({"weight", "bias", "model", "module", "tensor", "input"})


def terms(text: str) -> list[str]:
    """:func:`rca.retrieval.tokens.tokenize`, with "-es" plurals folded too ("losses" -> "loss")."""
    return [token[:-1] if _ES_PLURAL.search(token) else token for token in tokenize(text)]


def _mib(match: LinearMatch, name: str) -> float:
    return float(match.group(name)) * _UNITS[match.group(f"{name}_unit")]


def _memory_facts(message: str) -> set[str]:
    """From an OOM message's figures: is the memory PyTorch reserved unused (fragmentation)
    or really allocated; is the failed allocation smaller than the free memory; does another
    process hold most of the device? Nothing that the message does not say."""
    facts: set[str] = set()
    reserved: float | None = None
    if match := _OOM_NEW.search(message):
        allocated, spare = _mib(match, "alloc"), _mib(match, "spare")
        reserved = allocated + spare
    elif match := _OOM_OLD.search(message):
        allocated, reserved = _mib(match, "alloc"), _mib(match, "reserved")
        spare = max(reserved - allocated, 0.0)
    if reserved is not None:
        fragmented = spare >= FRAGMENTED_SHARE * max(allocated, 1.0)
        facts.add("memory-fragmented" if fragmented else "memory-not-fragmented")
    tried, free = _TRIED.search(message), _FREE.search(message)
    if tried and free and _mib(tried, "tried") <= _mib(free, "free"):
        facts.add("allocation-fits-free")
    total = _CAPACITY_NEW.search(message) or _CAPACITY_OLD.search(message)
    if total and free and reserved is not None:
        capacity = _mib(total, "total")
        elsewhere = capacity - _mib(free, "free") - reserved
        if capacity > 0 and elsewhere >= HELD_ELSEWHERE_SHARE * capacity:
            facts.add("memory-held-elsewhere")
    return facts


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
    if diff.get("op") == "conv" and len(expected) > 2 and len(actual) == len(expected):
        need, got = expected[1], actual[1]
        if need == 3 and got == 1:
            facts.add("grayscale-input")
        elif need == 3 and got == 4:
            facts.add("rgba-input")
        elif need is not None and actual[-1] == need:
            facts.add("channels-last-input")
    return facts


def incident_facts(
    message: str, diffs: Sequence[ShapeDiff], code: Sequence[str] = ()
) -> frozenset[str]:
    """The :data:`~rca.corpus.step_metadata.FACTS` this incident shows; ``code`` is the text
    of its frames and logs (where a pretrained model is loaded, say)."""
    facts = _memory_facts(message) | key_facts(message)
    for diff in diffs[:2]:
        facts |= _shape_facts(diff)
    texts = [text[:_MAX_TEXT] for text in (message, *code[:_MAX_TEXTS])]
    if any(_PRETRAINED.search(text) for text in texts):
        facts.add("layer-pretrained")
    return frozenset(facts | environment_facts(texts) | version_facts(texts[0], texts[1:]))


def fact_words(message: str, diffs: Sequence[ShapeDiff]) -> frozenset[str]:
    """Words a fitting step names: the mismatched tensor's own name ("embed_tokens", "fc"),
    the state_dict key prefix ("module") and the arguments the message says the API rejects
    ("lr" in "Argument(s) not recognized: {'lr': 0.002}")."""
    names = " ".join(str(diff.get("tensor") or "") for diff in diffs[:2])
    words = [word for word in terms(names) if word not in _GENERIC_TENSOR_WORDS]
    prefix = key_prefix(message)
    rejected = [word for name in rejected_arguments(message) for word in terms(name)]
    return frozenset(words + (terms(prefix) if prefix else []) + rejected)
