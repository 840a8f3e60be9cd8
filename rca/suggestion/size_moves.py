"""Whether an answer moves a size past the bound the message states (:mod:`.size_limits`).

The answer side: each setting or phrase of a quantity (:mod:`.size_settings`: ``--max-model-len``,
``-c``, ``tokenizer.model_max_length``, "the batch size") with the number it gives it (the
next token or one after "to", "=", "of": ``max_model_len=32768``, "batches of at most 8",
``32x3x640x640`` as its first axis, ``4GB``) or the way a verb before it moves it ("raise
max_tokens"). Harm, for the LLM to correct:

- a maximum: a number above it, or a raise with no number (the message says the request
  already exceeds it); a minimum: a number below it, or a lowering;
- unless the answer also does what moves the bound itself: a memory setting for a ``memory``
  bound (``--gpu-memory-utilization 0.95``), rope scaling for a model's context, a rebuild of
  the engine for an engine's batch, the other setting of a ``server`` pair (``unless``), the
  server's context for a request's completion.

Not moves: what the answer reports (:func:`.reported_clauses.without_reports`) or turns down
(:func:`.negated_clauses.turned_down`), what it keeps ("keep -c 32768"), and what another
model has ("use a model with a 32k context window", "switch to gpt-4-turbo with a 128k
context window"). A raise the message itself advises (:mod:`.advised_ways`) is judged there,
not twice. RE2 patterns (:mod:`ingest.linear_regex`) over a capped action.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ingest.linear_regex import compile as linear
from rca.suggestion.named_limits import DOWN_WORDS, UP_WORDS
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.reported_clauses import without_reports
from rca.suggestion.size_limits import SizeBound, quantity_words, show_size
from rca.suggestion.size_settings import family_of, size_names
from rca.suggestion.step_options import option_key

__all__ = ["size_harms"]

_MAX_ACTION = 2000
_MAX_TOKENS = 400
_TOKEN = linear(r"[A-Za-z0-9_.:+/-]+|=")
_CLAUSE = linear(r"[;,()]|\.(?:\s|$)")
_VALUE = linear(
    r"(?P<n>\d{1,12}(?:\.\d{1,6})?)(?P<unit>k|kb|kib|m|mb|mib|g|gb|gib)?(?:x[\dx]{1,40})?"
)
_UNITS = {"": 1, "k": 1024, "m": 2**20, "g": 2**30}
#: A thousands separator ("65,536"), read before clauses split at commas.
_THOUSANDS = linear(r"\b(?P<high>\d{1,3}),(?P<low>\d{3})\b")
#: Words between a setting and its number ("max_model_len to 7000", "batches of at most 8").
_JOINING = frozenset({"to", "=", "of", "at", "most", "a", "the", "is", "be", "size", "limit"})
#: Words before a setting that leave it as it is.
_KEPT = frozenset({"keep", "keeping", "leave", "current", "existing", "still", "already"})
#: Words before a setting that put it on another model or release ("switch to gpt-4-turbo with
#: a 128k context window", "a release that supports ...").
_OTHER = frozenset({"switch", "switching", "migrate", "support", "supports", "supporting"})
_MODEL = frozenset({"model", "models", "checkpoint", "variant"})
_REBUILD = frozenset({"rebuild", "rebuilding", "build", "re-build", "re-export", "reexport"})
_REBUILD |= {"recompile", "regenerate", "trtexec", "re-create", "recreate", "export"}
_UP_AFTER = frozenset({"higher", "up", "above"})
_DOWN_AFTER = frozenset({"lower", "down", "below"})


@dataclass(frozen=True)
class _Mention:
    family: str
    name: str
    value: float | None
    way: str  # "up", "down" or ""
    request: bool  # the clause is about a request ("send", "request", "client")


def _value(token: str) -> float | None:
    """A number as written: ``7000``, ``32k``, ``4GB``, ``32x3x640x640`` (its first axis),
    ``images:32x3x640x640``."""
    match = _VALUE.fullmatch(token.lower().rpartition(":")[2].strip("`'\".,;"))
    if match is None:
        return None
    return float(match.group("n")) * _UNITS[(match.group("unit") or "")[:1]]


def _number_after(tokens: list[str], at: int) -> float | None:
    """The number a setting at ``at`` is given, with a unit written apart ("4 GB")."""
    for offset, token in enumerate(tokens[at : at + 4], at):
        if token.lower().strip("`'\".,") in _JOINING:
            continue
        value = _value(token)
        unit = tokens[offset + 1].lower().strip("`'\".,;") if offset + 1 < len(tokens) else ""
        if value is not None and unit in ("kb", "kib", "mb", "mib", "gb", "gib"):
            value *= _UNITS[unit[:1]]
        return value
    return None


def _name_at(tokens: list[str], lowered: list[str], at: int) -> tuple[str, str, int] | None:
    """(family, name, index after it) of a setting or phrase starting at ``at``."""
    raw = tokens[at].strip("`'\".,:")
    names = size_names()
    if raw in names.flags:
        return names.flags[raw], raw, at + 1
    if raw[:1].isalpha() or raw[:1] == "-":
        family = family_of(raw)
        if family is not None:
            return family, raw, at + 1
    for words, family in names.phrases:
        if tuple(lowered[at : at + len(words)]) == words:
            return family, quantity_words(family), at + len(words)
    return None


def _mentions(clause: str) -> list[_Mention]:
    tokens = _TOKEN.findall(clause)[:_MAX_TOKENS]
    lowered = [token.lower().strip("`'\".,:") for token in tokens]
    request = bool({"send", "request", "requests", "client"} & set(lowered))
    found: list[_Mention] = []
    for at in range(len(tokens)):
        named = _name_at(tokens, lowered, at)
        if named is None:
            continue
        family, name, after = named
        before = lowered[max(0, at - 6) : at]
        if set(before[-3:]) & _KEPT or set(before) & _OTHER:
            continue
        if any(w in _MODEL and n in ("with", "that") for w, n in itertools.pairwise(before)):
            continue  # another model's context ("a model with a 32k context window")
        value = _number_after(tokens, after)
        way = ""
        if set(before) & UP_WORDS or set(lowered[after : after + 2]) & _UP_AFTER:
            way = "up"
        elif set(before) & DOWN_WORDS or set(lowered[after : after + 2]) & _DOWN_AFTER:
            way = "down"
        found.append(_Mention(family, name, value, way, request))
    return found


def _said(action: str) -> str:
    """The action without what it reports or turns down (same offsets)."""
    text = without_reports((action or "")[:_MAX_ACTION])
    text = _THOUSANDS.sub(lambda m: f"{m.group('high')}{m.group('low')} ", text)
    out = list(text)
    for start, end in turned_down(text):
        out[start:end] = " " * (end - start)
    return "".join(out)


def _excused(bound: SizeBound, named: set[str], rebuilt: bool) -> bool:
    """Whether the answer also moves what this bound rests on."""
    if bound.unless and bound.unless in named:
        return True
    if bound.kind == "memory":
        return "memory" in named
    if bound.kind == "model":
        if bound.quantity == "context":
            return "rope" in named
        return bound.quantity == "batch" and rebuilt  # an engine's profile or max batch
    return False


def _reason(bound: SizeBound, mention: _Mention, advised: Mapping[str, str]) -> str | None:
    told = f"the message says {bound.describe()}"
    wrong = "down" if bound.minimum else "up"
    advice = advised.get(option_key(mention.name))
    if advice is not None and (mention.value is None or mention.way not in ("", advice)):
        return None  # a move against the message's own advice is judged by advised_ways
    if mention.value is not None:
        past = mention.value < bound.limit if bound.minimum else mention.value > bound.limit
        if past:
            return f"{told}; the action sets {mention.name} to {show_size(mention.value)}"
        return None
    if mention.way != wrong or not bound.exceeded():
        return None
    moved = "lowering" if bound.minimum else "raising"
    return f"{told}; {moved} {mention.name} goes further past it"


def size_harms(
    action: str, bounds: Sequence[SizeBound], advised: Mapping[str, str] | None = None
) -> list[str]:
    """Why ``action`` moves a size past a bound the message states (empty: it does not)."""
    if not bounds:
        return []
    said = _said(action)
    mentions = [m for clause in _CLAUSE.split(said) if clause.strip() for m in _mentions(clause)]
    named = {m.family for m in mentions}
    words = {token.lower() for token in _TOKEN.findall(said)[:_MAX_TOKENS]}
    rebuilt = bool(words & _REBUILD)
    reasons: list[str] = []
    for bound in bounds:
        if _excused(bound, named, rebuilt):
            continue
        for mention in mentions:
            if mention.family != bound.quantity:
                continue
            if bound.kind == "server" and not (bound.unless or bound.minimum or mention.request):
                continue  # a server's own cap may be raised; a request past it may not
            reason = _reason(bound, mention, advised or {})
            if reason is not None and reason not in reasons:
                reasons.append(reason)
                break
    return reasons
