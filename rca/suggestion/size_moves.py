"""Whether an answer moves a size past the bound the message states (:mod:`.size_limits`).

The answer side: each setting or phrase of a quantity (:mod:`.size_settings`: ``--max-model-len``,
``-c``, ``tokenizer.model_max_length``, "the batch size") with the number it gives it (the
next token or one after "to", "=", "of": ``max_model_len=32768``, "batches of at most 8",
``32x3x640x640`` as its first axis, ``4GB``, ``60_000``, "sixty-four thousand") or the way a
verb before it moves it ("raise max_tokens"); a size written before what it makes ("export
it as a single 2.2 GB .onnx file": the quantity's ``nouns``). Harm, for the LLM to correct:

- a maximum: a number above it, or a raise with no number (the message says the request
  already exceeds it); a minimum: a number below it, or a lowering;
- unless the answer also does what moves the bound itself: a memory setting for a ``memory``
  bound (``--gpu-memory-utilization 0.95``), rope scaling for a model's context, a rebuild of
  the engine for an engine's batch, the other setting of a ``server`` pair (``unless``), the
  server's context for a request's completion (one the answer gives a number or a way: "to
  use the full context" moves none).

Not moves: what the answer reports (:func:`.reported_clauses.without_reports`) or turns down
(:func:`.negated_clauses.turned_down`), what it keeps ("keep -c 32768"; but a kept value
past a model's, memory's or hard bound keeps the failure: "keep max_batch_size 128" against
an engine built for batch 1), and what another
model has ("use a model with a 32k context window", "switch to gpt-4-turbo with a 128k
context window"). A raise the message itself advises (:mod:`.advised_ways`) is judged there,
not twice. RE2 patterns (:mod:`ingest.linear_regex`) over a capped action.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ingest.linear_regex import LinearMatch
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
#: Python's digit grouping ("60_000", "1_048_576": PEP 515), read as the number.
_GROUPED = linear(r"\b\d{1,3}(?:_\d{3}){1,4}\b")
#: A count in words with its magnitude ("sixty-four thousand", "thirty two thousand").
_UNIT_WORDS = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS_WORDS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_MAGNITUDES = {"hundred": 100, "thousand": 1000, "million": 10**6}
_WORDED = linear(
    r"\b(?:(?P<tens>"
    + "|".join(_TENS_WORDS)
    + r")(?:[- ](?P<unit>"
    + "|".join(_UNIT_WORDS[:9])
    + r"))?|(?P<small>"
    + "|".join(_UNIT_WORDS)
    + r"))[- ](?P<magnitude>hundred|thousand|million)\b",
    ignore_case=True,
)
#: Words between a setting and its number ("max_model_len to 7000", "batches of at most 8").
_JOINING = frozenset({"to", "=", "of", "at", "most", "a", "the", "is", "be", "size", "limit"})
_JOINING |= {"configured", "set", ":"}
#: Words before a setting that leave it as it is.
_KEPT = frozenset({"keep", "keeping", "leave", "current", "existing", "still", "already"})
#: Words before a setting that put it on another model or release ("switch to gpt-4-turbo with
#: a 128k context window", "a release that supports ...").
_OTHER = frozenset({"switch", "switching", "migrate", "support", "supports", "supporting"})
_MODEL = frozenset({"model", "models", "checkpoint", "variant"})
_REBUILD = frozenset({"rebuild", "rebuilding", "build", "re-build", "re-export", "reexport"})
_REBUILD |= {"recompile", "regenerate", "trtexec", "re-create", "recreate", "export"}
#: Words before a size that say the answer makes something of it, and articles between.
_MAKES_INTO = frozenset({"as", "into", "to"})
_ARTICLES = frozenset({"a", "an", "one", "single", "the"})
_BYTE_UNITS = frozenset({"kb", "kib", "mb", "mib", "gb", "gib"})
#: Bound kinds a kept value past the limit keeps failing (a request's completion may stay
#: when its prompt shrinks; a server's own cap may be kept while the request moves).
_KEPT_FAILS = frozenset({"model", "memory", "hard"})
_UP_AFTER = frozenset({"higher", "up", "above"})
_DOWN_AFTER = frozenset({"lower", "down", "below"})


@dataclass(frozen=True)
class _Mention:
    family: str
    name: str
    value: float | None
    way: str  # "up", "down" or ""
    request: bool  # the clause is about a request ("send", "request", "client")
    kept: bool = False  # the answer keeps it as it is ("keep max_batch_size 128")


def _value(token: str) -> float | None:
    """A number as written: ``7000``, ``32k``, ``4GB``, ``32x3x640x640`` (its first axis),
    ``images:32x3x640x640``."""
    match = _VALUE.fullmatch(token.lower().rpartition(":")[2].strip("`'\".,;"))
    if match is None:
        return None
    return float(match.group("n")) * _UNITS[(match.group("unit") or "")[:1]]


def _number_after(tokens: list[str], at: int) -> float | None:
    """The number a setting at ``at`` is given, with a unit written apart ("4 GB")."""
    for offset, token in enumerate(tokens[at : at + 6], at):
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
        if set(before) & _OTHER:
            continue
        if any(w in _MODEL and n in ("with", "that") for w, n in itertools.pairwise(before)):
            continue  # another model's context ("a model with a 32k context window")
        value = _number_after(tokens, after)
        way = ""
        if set(before[-3:]) & _KEPT:
            found.append(_Mention(family, name, value, way, request, kept=True))
            continue
        if set(before) & UP_WORDS or set(lowered[after : after + 2]) & _UP_AFTER:
            way = "up"
        elif set(before) & DOWN_WORDS or set(lowered[after : after + 2]) & _DOWN_AFTER:
            way = "down"
        found.append(_Mention(family, name, value, way, request))
    return found + _sized_nouns(tokens, lowered, request)


def _sized_nouns(tokens: list[str], lowered: list[str], request: bool) -> list[_Mention]:
    """A size written before what it sizes, as what the answer makes ("export it as a single
    2.2 GB .onnx file", "save into one 3GB protobuf"): the number (with a unit) after "as",
    "into" or "to" (and an article), a noun of the quantity right after it."""
    nouns = size_names().nouns
    found: list[_Mention] = []
    for at, token in enumerate(tokens):
        head = [w for w in lowered[max(0, at - 3) : at] if w not in _ARTICLES]
        if not head or head[-1] not in _MAKES_INTO or _value(token) is None:
            continue
        value = _number_after(tokens, at)
        step = 2 if at + 1 < len(lowered) and lowered[at + 1] in _BYTE_UNITS else 1
        unit = token.lower().strip("`'\".,;").lstrip("0123456789.")
        if value is None or not (unit in _BYTE_UNITS or step == 2):
            continue
        for noun in lowered[at + step : at + step + 2]:
            family = nouns.get(noun.lstrip("."))
            if family is not None:
                found.append(_Mention(family, quantity_words(family), value, "", request))
                break
    return found


def _said(action: str) -> str:
    """The action without what it reports or turns down (same offsets)."""
    text = without_reports((action or "")[:_MAX_ACTION])
    text = _THOUSANDS.sub(lambda m: f"{m.group('high')}{m.group('low')} ", text)
    text = _GROUPED.sub(lambda m: m.group(0).replace("_", "") + " " * m.group(0).count("_"), text)
    text = _WORDED.sub(lambda m: _worded(m.group(0), m), text)
    out = list(text)
    for start, end in turned_down(text):
        out[start:end] = " " * (end - start)
    return "".join(out)


def _worded(written: str, match: LinearMatch) -> str:
    """A count in words as digits, padded to the words' length (offsets kept)."""
    if match.group("tens"):
        count = 20 + 10 * _TENS_WORDS.index(match.group("tens").lower())
        count += _UNIT_WORDS.index(match.group("unit").lower()) + 1 if match.group("unit") else 0
    else:
        count = _UNIT_WORDS.index(match.group("small").lower()) + 1
    digits = str(count * _MAGNITUDES[match.group("magnitude").lower()])
    return digits.ljust(len(written)) if len(digits) <= len(written) else written


def _excused(bound: SizeBound, named: set[str], moved: set[str], rebuilt: bool) -> bool:
    """Whether the answer also moves what this bound rests on (a paired setting only when it
    gives it a number or a way: "to use the full context" moves no context)."""
    if bound.unless and bound.unless in moved:
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
    named = {m.family for m in mentions if not m.kept}
    moved = {m.family for m in mentions if not m.kept and (m.value is not None or m.way)}
    words = {token.lower() for token in _TOKEN.findall(said)[:_MAX_TOKENS]}
    rebuilt = bool(words & _REBUILD)
    reasons: list[str] = []
    for bound in bounds:
        if _excused(bound, named, moved, rebuilt):
            continue
        for mention in mentions:
            if mention.family != bound.quantity:
                continue
            if mention.kept and bound.kind not in _KEPT_FAILS:
                continue  # kept while what bounds it moves (the prompt, the request)
            if bound.kind == "server" and not (bound.unless or bound.minimum or mention.request):
                continue  # a server's own cap may be raised; a request past it may not
            reason = _reason(bound, mention, advised or {})
            if reason is not None and reason not in reasons:
                reasons.append(reason)
                break
    return reasons
