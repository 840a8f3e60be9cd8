"""What the key lists of a state_dict loading error say: which keys differ, and how.

PyTorch's ``load_state_dict`` lists the keys the model expects and the checkpoint lacks
(``Missing key(s) in state_dict: "a", "b"``) and those only the checkpoint has
(``Unexpected key(s) in state_dict: ...``). Two fixes answer such an error and each breaks
the other's case: when every missing key is an unexpected key with one prefix added or lost
(``module.``, ``_orig_mod.``), renaming every key is right; when only a few tensors differ
(a buffer one library version saves and another does not), renaming would break every
other key, and skipping those few is right. Both are read here from the lists alone, with
no key name known in advance; which runbook steps the facts select is runbook data.

Linear in the message: RE2 patterns find the lists, and pairing looks up each key's dotted
suffixes in a set (a key of d dots has d suffixes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ingest.linear_regex import compile as linear

__all__ = [
    "FEW_NAMES",
    "PARTLY_PREFIXED_SHARE",
    "PARAMETER_NAMES",
    "KeyLists",
    "differing_keys",
    "differing_keys_text",
    "key_facts",
    "key_prefix",
    "read_key_lists",
]

PARTLY_PREFIXED_SHARE = 0.5
"""The keys a prefix pairs (missing with unexpected) must be at least this share of all
listed keys for the checkpoint to count as renamed by the prefix; fewer, and only some keys
differ by it, so stripping it from every key would break the others. A plain majority."""

FEW_NAMES = 2
"""At most this many distinct last names (``num_batches_tracked``; ``total_ops`` and
``total_params``) among the keys that differ make them "a few tensors repeated across
layers" rather than a different architecture. Two, because counters and buffers come in
pairs at most (a count of operations and of parameters); not tuned on cases."""

PARAMETER_NAMES = frozenset({"weight", "bias"})
"""The names every learnable PyTorch layer gives its parameters (``nn.Linear``, the
convolutions, the norms, ``nn.Embedding``). Keys ending in them are learned weights: a
mismatch in them is never a buffer a library version added, so they never count as one
(a ``bias`` buffer, as some attention masks are named, is then missed: unknown, not no)."""

_MAX_KEYS = 200
_MAX_TEXT = 200_000
#: The head of a list (PyTorch prints one per line; a pasted message may join them, and the
#: colon is sometimes lost when quoted).
_HEAD = linear(r"(?P<kind>Missing|Unexpected) key\(s\) in state_dict:?")
#: A key in straight or typographic double quotes (forums turn one into the other).
_QUOTES = '"\u201c\u201d'
_KEY = linear(f"[{_QUOTES}](?P<key>[^{_QUOTES}\\s]{{1,300}})[{_QUOTES}]")
#: PyTorch ends each list with a full stop after its last key; a list without one ("...",
#: a dangling comma, the end of what was pasted) was cut short.
_COMPLETE = linear(r"^\s*\.(?:[^.]|$)")


@dataclass(frozen=True)
class KeyLists:
    """The missing and unexpected keys a message lists, and whether a list was cut short
    (its last key has no full stop after it)."""

    missing: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()
    cut: bool = False

    @property
    def listed(self) -> int:
        """How many distinct keys are listed."""
        return len(set(self.missing)) + len(set(self.unexpected))


def read_key_lists(message: str) -> KeyLists:
    """The key lists of a ``load_state_dict`` error message (empty when it has none)."""
    keys: dict[str, list[str]] = {"Missing": [], "Unexpected": []}
    cut = False
    message = message[:_MAX_TEXT]
    heads = list(_HEAD.finditer(message))
    for head, after in zip(heads, [*heads[1:], None], strict=False):
        # A list runs to the end of its line or to the next list's head, whichever is first.
        text = message[head.end() : after.start() if after else len(message)].split("\n", 1)[0]
        found = list(_KEY.finditer(text))
        keys[head.group("kind")].extend(m.group("key") for m in found[:_MAX_KEYS])
        if found and not _COMPLETE.search(text[found[-1].end() :]):
            cut = True
    return KeyLists(tuple(keys["Missing"][:_MAX_KEYS]), tuple(keys["Unexpected"][:_MAX_KEYS]), cut)


def _prefix_pairs(lists: KeyLists) -> list[tuple[str, str, str]]:
    """(prefix, longer key, shorter key) for every listed key that is a key of the other
    list with a dotted prefix added (``module.conv.weight`` for ``conv.weight``)."""
    pairs: list[tuple[str, str, str]] = []
    missing, unexpected = set(lists.missing), set(lists.unexpected)
    for longer, shorter in ((unexpected, missing), (missing, unexpected)):
        for key in sorted(longer):
            at = key.find(".")
            while at >= 0:
                if (rest := key[at + 1 :]) in shorter:
                    pairs.append((key[: at + 1], key, rest))
                at = key.find(".", at + 1)
    return pairs


def key_prefix(message: str | KeyLists) -> str | None:
    """The prefix that pairs most of the listed missing and unexpected keys (the unexpected
    ones are the missing ones with it, or the other way round), else None."""
    lists = read_key_lists(message) if isinstance(message, str) else message
    pairs = _prefix_pairs(lists)
    if not pairs:
        return None
    return Counter(prefix for prefix, _, _ in pairs).most_common(1)[0][0]


def _paired(lists: KeyLists) -> set[str]:
    prefix = key_prefix(lists)
    return {key for p, a, b in _prefix_pairs(lists) if p == prefix for key in (a, b)}


def differing_keys(lists: KeyLists) -> list[str]:
    """The listed keys that the common prefix does not pair: those that really differ."""
    paired = _paired(lists)
    seen = dict.fromkeys(k for k in (*lists.missing, *lists.unexpected) if k not in paired)
    return list(seen)


def _last_name(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def _prefixed(lists: KeyLists) -> bool:
    return bool(lists.listed) and len(_paired(lists)) >= PARTLY_PREFIXED_SHARE * lists.listed


def _few_tensors(lists: KeyLists) -> bool:
    """The differing keys are one or two tensor names repeated across layers, none a
    layer's weight or bias (a counter or buffer some version adds), and no prefix renames
    most keys (then that is the fix, and the few left over come after it)."""
    differing = differing_keys(lists)
    names = {_last_name(key) for key in differing}
    return (
        bool(differing)
        and not _prefixed(lists)
        and len(names) <= FEW_NAMES
        and not names & PARAMETER_NAMES
    )


def key_facts(message: str) -> set[str]:
    """Facts (:data:`rca.corpus.step_metadata.FACTS`) the listed keys show.

    - prefixed / partly-prefixed / not-prefixed: how far one prefix pairs missing with
      unexpected keys; nothing when a one-sided list was cut short (its other side may be
      in what was cut);
    - buffer-like: only a few tensor names differ (:func:`_few_tensors`);
    - only-extra: the message lists unexpected keys and no missing ones, uncut: the
      checkpoint holds every key the model expects, plus others;
    - top-level: some unexpected keys have no dot (``epoch``, ``state_dict``): entries of a
      training checkpoint around the weights, not tensors, while model keys are missing.
    """
    lists = read_key_lists(message)
    if not lists.listed:
        return set()
    facts: set[str] = set()
    one_sided = not lists.missing or not lists.unexpected
    if key_prefix(lists) is not None:
        facts.add(
            "state-dict-keys-prefixed" if _prefixed(lists) else "state-dict-keys-partly-prefixed"
        )
    elif not (one_sided and lists.cut):
        facts.add("state-dict-keys-not-prefixed")
    few = _few_tensors(lists)
    if few:
        facts.add("state-dict-keys-buffer-like")
    if lists.unexpected and not lists.missing and not lists.cut:
        facts.add("state-dict-keys-only-extra")
    if lists.missing and not few and any("." not in key for key in lists.unexpected):
        facts.add("state-dict-keys-top-level")
    return facts


def differing_keys_text(message: str, limit: int = 3) -> str:
    """The differing keys as a step names them: the keys themselves when there are at most
    two and they hold no layer index, else their distinct last names
    (```*.num_batches_tracked```; a layer index would read as a tensor size); empty for none."""
    keys = differing_keys(read_key_lists(message))
    if not keys:
        return ""
    if len(keys) <= 2 and not any(char.isdigit() for key in keys for char in key):
        return ", ".join(f"`{key}`" for key in keys)
    names: Iterable[str] = dict.fromkeys(_last_name(key) for key in keys)
    return ", ".join(f"`*.{name}`" for name in list(names)[:limit])
