"""Facts read from an incident's own figures: shapes, state_dict keys, memory numbers.

Each fact has a name from :data:`rca.corpus.step_metadata.FACTS`; which steps a fact makes
the fix (``fits``) or rules out (``unless``) is written in the runbooks, not here. This
module only reads the incident, generically: no fact names a framework, a model or a case.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear
from ingest.parsing.shapes import ShapeDiff
from rca.retrieval.tokens import tokenize
from rca.suggestion.providers.offline_weights import WEIGHTS

__all__ = ["fact_words", "incident_facts", "terms"]

_MEMORY = r"(?P<{name}>\d+(?:\.\d+)?)\s*(?P<{name}_unit>[KMGT])iB"
_OOM_NEW = linear(
    _MEMORY.format(name="alloc")
    + r" is allocated by PyTorch, and "
    + _MEMORY.format(name="spare")
    + r" is reserved by PyTorch but unallocated"
)
_OOM_OLD = linear(
    _MEMORY.format(name="alloc")
    + r" already allocated;.*?"
    + _MEMORY.format(name="reserved")
    + r" reserved in total by PyTorch"
)
_UNITS = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}
_KEYS_LINE = linear(r"(?P<kind>Missing|Unexpected) key\(s\) in state_dict:(?P<keys>[^\n]*)")
_KEY = linear(r'"([^"]+)"')
_ES_PLURAL = linear(r"(?:ss|ch|sh|x|z)e$")
#: Parts of tensor names that every model has: naming them says nothing about a step.
_GENERIC_TENSOR_WORDS = frozenset({"weight", "bias", "model", "module", "tensor", "input"})


def terms(text: str) -> list[str]:
    """:func:`rca.retrieval.tokens.tokenize`, with "-es" plurals folded too ("losses" -> "loss")."""
    return [token[:-1] if _ES_PLURAL.search(token) else token for token in tokenize(text)]


def _mib(match: LinearMatch, name: str) -> float:
    return float(match.group(name)) * _UNITS[match.group(f"{name}_unit")]


def _memory_facts(message: str) -> set[str]:
    """From an OOM message's figures: is a large part of the memory PyTorch reserved unused
    (fragmentation), or is it really allocated? Nothing when the message does not say."""
    if match := _OOM_NEW.search(message):
        allocated, spare = _mib(match, "alloc"), _mib(match, "spare")
    elif match := _OOM_OLD.search(message):
        allocated = _mib(match, "alloc")
        spare = max(_mib(match, "reserved") - allocated, 0.0)
    else:
        return set()
    fragmented = spare >= WEIGHTS.fragmented_share * max(allocated, 1.0)
    return {"memory-fragmented" if fragmented else "memory-not-fragmented"}


def _key_prefix(message: str) -> str | None:
    """The prefix by which the unexpected state_dict keys differ from the missing ones (or
    the other way round), else None."""
    keys: dict[str, list[str]] = {"Missing": [], "Unexpected": []}
    for match in _KEYS_LINE.finditer(message):
        keys[match.group("kind")].extend(_KEY.findall(match.group("keys")))
    missing, unexpected = set(keys["Missing"]), set(keys["Unexpected"])
    for longer, shorter in ((unexpected, missing), (missing, unexpected)):
        for key in sorted(longer):
            for other in sorted(shorter):
                if key != other and key.endswith("." + other):
                    return key[: -len(other)]
    return None


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


def incident_facts(message: str, diffs: Sequence[ShapeDiff]) -> frozenset[str]:
    """The :data:`~rca.corpus.step_metadata.FACTS` this incident shows."""
    facts = _memory_facts(message)
    for diff in diffs[:2]:
        facts |= _shape_facts(diff)
    if _key_prefix(message) is not None:
        facts.add("state-dict-keys-prefixed")
    return frozenset(facts)


def fact_words(message: str, diffs: Sequence[ShapeDiff]) -> frozenset[str]:
    """Words a fitting step names: the mismatched tensor's own name ("embed_tokens", "fc")
    and the state_dict key prefix ("module")."""
    names = " ".join(str(diff.get("tensor") or "") for diff in diffs[:2])
    words = [word for word in terms(names) if word not in _GENERIC_TENSOR_WORDS]
    prefix = _key_prefix(message)
    return frozenset(words + (terms(prefix) if prefix else []))
