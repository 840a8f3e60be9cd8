"""Which side of a state_dict load carries a key prefix, and whether a step that strips or adds
it is already done.

:mod:`.state_dict_keys` reads whether one prefix pairs the missing keys with the unexpected
ones; it does not say which side has it, and the two fixes are opposites. The keys a message
lists as *unexpected* are the checkpoint's (the model has no such parameter); the *missing*
ones are the model's (the checkpoint lacks them). So:

- "strip `module.` from the checkpoint's keys" is already done when the checkpoint's keys
  shown lack it (a DataParallel model expects ``module.conv.weight``, the file holds
  ``conv.weight``: stripping renames nothing; wrapping before loading, or loading into
  ``model.module``, is the fix), and is harmful when both sides carry it (every key that
  matched stops matching);
- "add `base_model.model.` to the keys" is already done when the checkpoint's keys shown
  start with it (PEFT adapter keys saved by ``PeftModel``), and cannot help when the model's
  keys shown lack it.

Besides PyTorch's ``Missing key(s)`` / ``Unexpected key(s)`` lists, Transformers' and PEFT's
warnings list keys too: "Some weights of the model checkpoint at X were not used when
initializing Y: [...]" (the checkpoint's), "Some weights of Y were not initialized from the
model checkpoint at X and are newly initialized: [...]" and "Found missing adapter keys while
loading the checkpoint: [...]" (the model's). :func:`prefix_moves` reads the prefix an action
strips or adds ("strip the `module.` prefix", ``k.removeprefix("module.")``,
``k.replace("module.", "")``, "prepend `base_model.model.`", ``"module." + k``);
:func:`prefix_violations` says which the keys shown already contradict. No prefix is known in
advance. Linear: RE2 patterns over bounded texts.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.prefix_helpers import helper_strips
from rca.suggestion.prefix_shift import non_strict_violations, prefix_shift_facts
from rca.suggestion.state_dict_keys import key_prefix, read_key_lists

__all__ = [
    "ShownKeys",
    "moves_a_prefix",
    "prefix_moves",
    "prefix_side_facts",
    "prefix_violations",
    "read_shown_keys",
]

_MAX_TEXT = 200_000
_MAX_KEYS = 200
_MAX_ACTION = 2000
#: The head of a Transformers / PEFT warning that lists keys, and which side they are.
_CHECKPOINT_LIST = linear(
    r"Some weights of the model checkpoint at \S+ were not used when initializing [^:\n]+:\s*\["
)
_MODEL_LIST = linear(
    r"(?:Some weights of [^\n]+? were not initialized from the model checkpoint at [^\n]+?"
    r"(?:newly initialized|initialized)[^:\n]*|Found missing adapter keys while loading the"
    r" checkpoint):\s*\["
)
_LIST_KEY = linear(r"'(?P<key>[^'\s]{1,300})'")
_PREFIX = r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*\.?"
_Q = "[`'\"]"
_STRIP_VERB = (
    r"\b(?:strip(?:s|ped|ping)?|remov(?:e|es|ed|ing)|drop(?:s|ped|ping)?|delet(?:e|es|ed|ing)"
    r"|trim(?:s|med|ming)?|cut(?:s|ting)?|chop(?:s|ped|ping)?)\b"
)
#: "strip/remove/drop the `module.` prefix", "strip the leading `module.` from each key"
#: (a quoted name ending in a dot is a prefix), "removeprefix('module.')",
#: "replace('module.', '')", "k[len('module.'):]".
_STRIPS = (
    linear(
        rf"{_STRIP_VERB}[^.;\n]{{0,30}}?(?:{_Q}(?P<prefix>{_PREFIX}){_Q}"
        rf"\s*prefix|prefix(?:es)?\s*\(?{_Q}(?P<prefix2>{_PREFIX}){_Q}"
        rf"|{_Q}(?P<prefix3>[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*\.){_Q})",
        ignore_case=True,
    ),
    linear(rf"removeprefix\(\s*{_Q}(?P<prefix>{_PREFIX}){_Q}\s*\)"),
    linear(rf"replace\(\s*{_Q}(?P<prefix>{_PREFIX}){_Q}\s*,\s*{_Q}{_Q}\s*\)"),
    linear(rf"\[\s*len\(\s*{_Q}(?P<prefix>{_PREFIX}){_Q}\s*\)\s*:\s*\]"),
)
#: A key sliced past its first characters ("k[7:]"): the prefix is what those characters are.
_SLICE = linear(r"\b(?:k|key|name|n)\[\s*(?P<length>[1-9]\d?)\s*:\s*\]")
#: A key cut after its first dotted name: "k.split('.', 1)[1]", "k.partition('.')[2]",
#: "'.'.join(k.split('.')[1:])": the prefix is whatever name the keys start with.
_FIRST_NAME = linear(
    r"\b(?:k|key|name|n)\.(?:split\(\s*['\"]\.['\"]\s*,\s*(?:maxsplit\s*=\s*)?1\s*\)"
    r"\s*\[\s*-?1\s*\]|partition\(\s*['\"]\.['\"]\s*\)\s*\[\s*2\s*\])"
    r"|['\"]\.['\"]\.join\(\s*(?:k|key|name|n)\.split\(\s*['\"]\.['\"]\s*\)\s*\[\s*1\s*:\s*\]\s*\)"
)
#: "add/prepend the `base_model.model.` prefix", "'module.' + k", f"module.{k}".
_ADDS = (
    linear(
        rf"\b(?:add|prepend|restore)s?\b[^.;\n]{{0,30}}?(?:{_Q}(?P<prefix>{_PREFIX}){_Q}"
        rf"\s*prefix|prefix(?:es)?\s*\(?{_Q}(?P<prefix2>{_PREFIX}){_Q})",
        ignore_case=True,
    ),
    linear(rf"{_Q}(?P<prefix>{_PREFIX}){_Q}\s*\+\s*k"),
    linear(r"f[`'\"](?P<prefix>[A-Za-z_][\w.]*\.)\{k"),
)
#: A quoted dotted name that may be a key prefix ("`_orig_mod.`").
_QUOTED = linear(rf"{_Q}(?P<prefix>{_PREFIX}\.){_Q}")
#: An action that strips or adds a prefix on the model's side names it ("from the model").
_MODEL_SIDE = linear(r"\b(?:from|to|of) (?:the )?model'?s? (?:keys|parameters|state_dict)\b")


@dataclass(frozen=True)
class ShownKeys:
    """The keys the incident lists: the checkpoint's (unexpected, unused) and the model's
    (missing, newly initialised)."""

    checkpoint: tuple[str, ...] = ()
    model: tuple[str, ...] = ()
    #: A PyTorch key list was cut short ("...", no closing full stop): more keys were not shown.
    cut: bool = False


def _listed(text: str, head: LinearPattern) -> list[str]:
    keys: list[str] = []
    for match in head.finditer(text):
        rest = text[match.end() :].split("]", 1)[0]
        keys += [m.group("key") for m in _LIST_KEY.finditer(rest)][:_MAX_KEYS]
    return keys[:_MAX_KEYS]


def read_shown_keys(texts: Sequence[str]) -> ShownKeys:
    """The checkpoint's and the model's keys that the message and log lines list."""
    checkpoint: list[str] = []
    model: list[str] = []
    cut = False
    for text in texts:
        text = (text or "")[:_MAX_TEXT]
        lists = read_key_lists(text)
        checkpoint += [*lists.unexpected, *_listed(text, _CHECKPOINT_LIST)]
        model += [*lists.missing, *_listed(text, _MODEL_LIST)]
        cut = cut or lists.cut
    return ShownKeys(tuple(checkpoint[:_MAX_KEYS]), tuple(model[:_MAX_KEYS]), cut)


def _normal(prefix: str) -> str:
    return prefix if prefix.endswith(".") else prefix + "."


def prefix_moves(action: str) -> list[tuple[str, str]]:
    """("strip" | "add", prefix with its dot) for each prefix the action strips from or adds
    to the checkpoint's keys (by words, by code, by a helper function that strips one,
    :mod:`.prefix_helpers`), or ("cut", N) for keys sliced past their first N characters
    ("k[7:]") with no quoted prefix that long (("cut", "") for a helper call whose prefix is
    not spelled) (not those it says it changes on the model's side, nor those in
    a clause it turns down: "do not strip the `module.` prefix", :mod:`.negated_clauses`)."""
    text = (action or "")[:_MAX_ACTION]
    if _MODEL_SIDE.search(text):
        return []
    down = turned_down(text)
    starts = [start for start, _ in down]

    def refused(at: int) -> bool:
        index = bisect.bisect_right(starts, at) - 1
        if index >= 0 and at < down[index][1]:
            return True
        # An aside right after a turned-down clause gives its example: "rather than renaming
        # keys (e.g. stripping `module.`)".
        opened = text.rfind("(", 0, at)
        return opened > text.rfind(")", 0, at) and opened > 0 and refused(opened - 1)

    moves: list[tuple[str, str]] = []

    def found(move: tuple[str, str]) -> None:
        if move not in moves:
            moves.append(move)

    for verb, patterns in (("strip", _STRIPS), ("add", _ADDS)):
        for pattern in patterns:
            for match in pattern.finditer(text):
                if not refused(match.start()):
                    groups = match.groupdict()
                    named = groups.get("prefix") or groups.get("prefix2") or groups.get("prefix3")
                    found((verb, _normal(named or "")))
    for at, prefix in helper_strips(text):
        if not refused(at):
            found(("strip", _normal(prefix)) if prefix else ("cut", ""))
    quoted = {len(_normal(m.group("prefix"))): m.group("prefix") for m in _QUOTED.finditer(text)}
    for match in _SLICE.finditer(text):
        if not refused(match.start()):
            length = int(match.group("length"))
            name = quoted.get(length)
            found(("strip", _normal(name)) if name else ("cut", str(length)))
    for match in _FIRST_NAME.finditer(text):
        if not refused(match.start()):
            found(("cut", "name"))
    return moves


def moves_a_prefix(action: str) -> bool:
    """Whether ``action`` strips or adds a key prefix itself, on either side: an answer that
    restates a step is then judged by its own move (:func:`.premises.shown_harms`)."""
    text = (action or "")[:_MAX_ACTION]
    patterns = (*_STRIPS, *_ADDS, _SLICE, _FIRST_NAME)
    return any(pattern.search(text) for pattern in patterns) or bool(helper_strips(text))


def _all_start(keys: Sequence[str], prefix: str) -> bool:
    return bool(keys) and all(key.startswith(prefix) for key in keys)


def _none_start(keys: Sequence[str], prefix: str) -> bool:
    return bool(keys) and not any(key.startswith(prefix) for key in keys)


def _resolved(
    moves: list[tuple[str, str]], keys: ShownKeys, reasons: list[str]
) -> list[tuple[str, str]]:
    """``moves`` with each key sliced past its first N characters read as stripping what the
    checkpoint's keys shown start with, when they all start with one N-character dotted name;
    when they do not, the slice cuts into their names, and ``reasons`` says so."""
    out: list[tuple[str, str]] = []
    for verb, prefix in moves:
        if verb != "cut":
            out.append((verb, prefix))
        elif prefix == "name" and keys.checkpoint:  # cut after the first dotted name
            heads = {key.split(".", 1)[0] + "." for key in keys.checkpoint}
            head = heads.pop() if len(heads) == 1 else ""
            cut = {key[len(head) :] for key in keys.checkpoint}
            pairs = not keys.model or cut <= set(keys.model)  # the cut keys are the model's
            if head and all("." in key for key in keys.checkpoint) and pairs:
                out.append(("strip", head))
            else:
                reasons.append(
                    "no one dotted prefix such as `module.` pairs the checkpoint's keys shown"
                    " with the model's: cutting at the first dot takes a real name off every key"
                )
        elif prefix and keys.checkpoint:
            heads = {key[: int(prefix)] for key in keys.checkpoint}
            head = heads.pop() if len(heads) == 1 else ""
            if head.endswith("."):
                out.append(("strip", head))
            else:
                reasons.append(
                    f"the checkpoint's keys shown do not all start with one {prefix}-character"
                    f" prefix such as `module.`: `[{prefix}:]` cuts into their names"
                )
    return out


def prefix_violations(action: str, keys: ShownKeys, moves: bool = True) -> list[str]:
    """Why the keys shown make the action's prefix change already done or harmful, or its
    non-strict load match nothing (:mod:`.prefix_shift`); empty when they do not, or when no
    keys are shown. Without ``moves``, only the non-strict load is read (an answer restating
    the step moves a prefix its own way)."""
    reasons: list[str] = non_strict_violations(action, keys)
    if not moves:
        return reasons
    shown = (*keys.checkpoint, *keys.model)
    # A step may show one prefix as the example of a family ("`module.` (likewise
    # `_orig_mod.`)"): when another prefix it quotes is the one the keys carry, the example
    # is not this incident's move.
    quoted = {_normal(m.group("prefix")) for m in _QUOTED.finditer((action or "")[:_MAX_ACTION])}
    carried = {prefix for prefix in quoted if any(key.startswith(prefix) for key in shown)}
    for verb, prefix in _resolved(prefix_moves(action), keys, reasons):
        if not any(prefix in key for key in shown) and carried - {prefix}:
            continue
        doubled = any(key.startswith(prefix + prefix) for key in keys.checkpoint)
        if verb == "strip":
            if _none_start(keys.checkpoint, prefix):
                reasons.append(f"the checkpoint's keys shown already lack `{prefix}`")
            elif _all_start(keys.model, prefix) and not doubled:
                reasons.append(
                    f"the model's keys shown carry `{prefix}`, so keys stripped of it cannot"
                    " match: wrap the model before loading or load into its inner module"
                )
        else:
            if _all_start(keys.checkpoint, prefix) and not doubled:
                reasons.append(f"the checkpoint's keys shown already carry `{prefix}`")
            elif _none_start(keys.model, prefix):
                reasons.append(f"the model's keys shown lack `{prefix}`, so adding it cannot match")
    return reasons


def prefix_side_facts(message: str) -> set[str]:
    """Which side carries the prefix that pairs the listed keys
    (:func:`rca.suggestion.state_dict_keys.key_prefix`): ``state-dict-prefix-on-model-side``
    when every missing (model) key shown starts with it and no unexpected (checkpoint) key
    does (the model was wrapped after the file was saved unwrapped),
    ``state-dict-prefix-on-checkpoint-side`` for the converse (a wrapped model's save loaded
    into a bare one); ``state-dict-keys-all-prefixed`` when every key shown differs by one
    prefix (:func:`.prefix_shift.prefix_shift`)."""
    shift = prefix_shift_facts(read_shown_keys([message]))
    lists = read_key_lists((message or "")[:_MAX_TEXT])
    prefix = key_prefix(lists)
    if prefix is None:
        return shift
    if _all_start(lists.missing, prefix) and _none_start(lists.unexpected, prefix):
        return {"state-dict-prefix-on-model-side"} | shift
    if _all_start(lists.unexpected, prefix) and _none_start(lists.missing, prefix):
        return {"state-dict-prefix-on-checkpoint-side"} | shift
    return shift
