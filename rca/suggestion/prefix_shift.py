"""Whether every state_dict key shown differs by one prefix, and whether an action loads
non-strictly in spite of it.

Loading with ``strict=False`` (or "ignoring the missing keys") is right when only a few keys
differ: a buffer one library version saves, a head the checkpoint lacks. When *every* key
shown carries a wrapper's prefix the other side lacks (``module.`` from DataParallel,
``_orig_mod.`` from ``torch.compile``, ``model.`` or ``backbone.`` from a wrapper class), a
non-strict load matches no key at all: it reports success and leaves the model at its random
initialisation. The fix there is to strip or add the prefix (:mod:`.key_prefix_sides` says
which side has it). :func:`prefix_shift` decides it from the keys the incident shows
(:class:`.key_prefix_sides.ShownKeys`, which composes these checks into its facts and
violations: PyTorch's missing and unexpected lists, Transformers'
and PEFT's warnings):

- both sides shown: every key of one side is a key of the other with one prefix added (or
  lost), or with its first name swapped for another, as far as the shown keys pair at all,
  and every shown key starts so (``module.a`` / ``a``, ``backbone.a`` / ``model.a``);
- one side shown and its list cut short ("...", no closing full stop): the other side may be
  in what was cut, so the keys shown decide: at least :data:`MIN_CUT_KEYS` of them, all under
  one first name, each still a dotted path below it (``_orig_mod.encoder.proj.weight``, not a
  single layer's ``affine.weight``).

Keys that are a buffer or two repeated across layers (``num_batches_tracked``, thop's
``total_ops``) are never a shift, whatever they start with: they are the "few keys" case. A
list that is cut is said to be so in the reason. :func:`non_strict_violations` reads an
action that loads non-strictly (``strict=False``, "non-strict", "ignore the missing keys") and
says why the keys contradict it; the premise check (:mod:`.premises`) rejects it from any
author, and runbook steps name the fact ``state-dict-keys-all-prefixed`` in ``unless``.
Linear: RE2 patterns over a bounded action; set look-ups over at most 200 keys a side.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ingest.linear_regex import compile as linear
from rca.suggestion.old_mentions import anywhere
from rca.suggestion.state_dict_keys import FEW_NAMES, PARAMETER_NAMES

__all__ = [
    "MIN_CUT_KEYS",
    "PrefixShift",
    "non_strict_violations",
    "prefix_shift",
    "prefix_shift_facts",
    "reads_non_strict",
]

MIN_CUT_KEYS = 3
"""A cut one-sided list shows at least this many keys under one first name before they count
as a whole model under a wrapper: two keys are one layer's weight and bias. Not tuned on cases."""

_MAX_ACTION = 2000
#: An action that loads without requiring every key: ``strict=False``, "non-strict",
#: "ignore/skip the missing (unexpected, extra) keys", "drop the keys only one side has", "the
#: warning is safe to ignore".
_NON_STRICT = (
    linear(r"\bstrict\s*[=:]\s*(?:False|false|0)\b"),
    linear(r"\bnon[- ]?strict(?:ly)?\b", ignore_case=True),
    linear(r"\bnot strictly\b", ignore_case=True),
    linear(
        r"\b(?:ignore|skip|drop|discard|filter out)s?\b[^.;\n]{0,30}?\b(?:missing|unexpected|extra"
        r"|mismatched|unmatched|differing)\s+(?:state_dict\s+)?keys?\b",
        ignore_case=True,
    ),
    linear(r"\b(?:drop|skip|ignore)s?\b[^.;\n]{0,20}?\bkeys only one side has\b", ignore_case=True),
    # Transformers lists the keys in a warning: calling it safe to ignore loads nothing too.
    linear(r"\b(?:safe to ignore|ignore (?:the|this) (?:loading )?warning)\b", ignore_case=True),
)
#: Words just before the mention that turn it away ("remove `strict=False`", "instead of"):
#: :mod:`.old_mentions`' groups, read over the last :data:`_AWAY_WORDS` words.
_AWAY = anywhere(
    *("preference", "comparison", "negation", "exclusion", "removal", "dropping"),
)
#: This reader's own: "keep strict loading; non-strict ...", "stop loading non-strictly",
#: "non-strict hides the mismatch" (what the answer says a non-strict load does wrong).
_HOLDING = frozenset({"keep", "stop", "hide", "hides"})
_AWAY_WORDS = 4
_WORD = linear(r"[A-Za-z'_]+")


class ShownKeys(Protocol):
    """The keys an incident shows (:class:`.key_prefix_sides.ShownKeys`, which composes this
    module's checks into its own and so is not imported here)."""

    @property
    def checkpoint(self) -> tuple[str, ...]: ...
    @property
    def model(self) -> tuple[str, ...]: ...
    @property
    def cut(self) -> bool: ...


@dataclass(frozen=True)
class PrefixShift:
    """The prefix every key shown differs by, and how that was read."""

    prefix: str
    how: str  # "added or lost", "swapped for `x.`", "on every key of the cut list"
    cut: bool

    def describe(self) -> str:
        verb = "starts with" if self.how.startswith("on every") else "differs by"
        text = f"every state_dict key shown {verb} the prefix `{self.prefix}` ({self.how})"
        if self.cut:
            text += "; the key lists are cut short, so this is read from the keys shown"
        return text


def _head(key: str) -> str:
    return key.split(".", 1)[0] + "." if "." in key else ""


def _buffer_like(keys: Sequence[str]) -> bool:
    """One or two tensor names, neither a weight nor a bias, repeated across layers."""
    names = {key.rsplit(".", 1)[-1] for key in keys}
    return len(names) <= FEW_NAMES and not names & PARAMETER_NAMES


def _added(longer: Sequence[str], shorter: Sequence[str]) -> Counter[str]:
    """How many keys of ``longer`` are a key of ``shorter`` with each dotted prefix added."""
    others, found = set(shorter), Counter[str]()
    for key in longer:
        at = key.find(".")
        while at >= 0:
            if key[at + 1 :] in others:
                found[key[: at + 1]] += 1
                break
            at = key.find(".", at + 1)
    return found


def _two_sided(checkpoint: Sequence[str], model: Sequence[str]) -> tuple[str, str] | None:
    for longer, shorter in ((checkpoint, model), (model, checkpoint)):
        counts = _added(longer, shorter)
        if counts:
            prefix = counts.most_common(1)[0][0]
            if all(key.startswith(prefix) for key in longer) and not any(
                key.startswith(prefix) for key in shorter
            ):
                return prefix, "added on one side, lost on the other"
    heads = {_head(key) for key in checkpoint}, {_head(key) for key in model}
    if len(heads[0]) == 1 and len(heads[1]) == 1 and "" not in heads[0] | heads[1]:
        (ours,), (theirs,) = heads
        rests = {key[len(ours) :] for key in checkpoint}
        if ours != theirs and rests & {key[len(theirs) :] for key in model}:
            return ours, f"the model's keys carry `{theirs}` instead"
    return None


def prefix_shift(keys: ShownKeys) -> PrefixShift | None:
    """The prefix every shown key differs by (None: not every one, no keys, or a few
    buffers)."""
    shown = [*keys.checkpoint, *keys.model]
    if not shown or _buffer_like(shown):
        return None
    if keys.checkpoint and keys.model:
        found = _two_sided(keys.checkpoint, keys.model)
        return PrefixShift(found[0], found[1], keys.cut) if found else None
    if not keys.cut or len(set(shown)) < MIN_CUT_KEYS:
        return None  # an uncut one-sided list is the whole difference: a few keys, not a shift
    heads = {_head(key) for key in shown}
    if len(heads) != 1 or "" in heads:
        return None
    (head,) = heads
    if not all("." in key[len(head) :] for key in shown):
        return None
    side = "checkpoint's" if keys.checkpoint else "model's"
    return PrefixShift(head, f"on every {side} key of the cut list", True)


def prefix_shift_facts(keys: ShownKeys) -> set[str]:
    """``state-dict-keys-all-prefixed`` when :func:`prefix_shift` finds a prefix."""
    return {"state-dict-keys-all-prefixed"} if prefix_shift(keys) else set()


def reads_non_strict(action: str) -> bool:
    """Whether the action loads non-strictly (not when it says to stop doing so)."""
    text = (action or "")[:_MAX_ACTION]
    for pattern in _NON_STRICT:
        for match in pattern.finditer(text):
            before = _WORD.findall(text[max(0, match.start() - 40) : match.start()].lower())
            words = before[-_AWAY_WORDS:]
            away = _AWAY.search(" ".join(words)) or set(words) & _HOLDING
            if not away or match.group(0).lower().startswith("drop"):
                return True
    return False


def non_strict_violations(action: str, keys: ShownKeys) -> list[str]:
    """Why the keys shown make a non-strict load of ``action`` load nothing (empty: they do
    not, or it does not load non-strictly)."""
    shift = prefix_shift(keys)
    if shift is None or not reads_non_strict(action):
        return []
    return [
        f"{shift.describe()}: a non-strict load would match none of them and leave the model"
        " randomly initialised; make the keys match by their prefix instead"
    ]
