"""The vocabulary size an answer gives ``resize_token_embeddings``, grounded when the
incident's numbers derive it.

``model.resize_token_embeddings(N)`` takes the tokenizer's length, not a size the shape diff
must hold: the checkpoint's rows are 32000, the logs say "Added 2 special tokens", and
``resize_token_embeddings(32002)`` is the sum of the two, as ``len(tokenizer)`` would be. The
dimension rule (:mod:`.dimensions`) reads N as a tensor size; it is grounded when it is
a number the diff holds or the incident states (read there), or derived from them here:

- a known number plus or minus another known number (the tokens added or removed: a count the
  incident states, or the gap between the diff's sizes), or plus one (the rows an index error's
  largest id needs: id 32000 needs 32001);
- a known number rounded up to the ``pad_to_multiple_of`` the same call gives (the padded
  vocabulary Transformers builds: 32001 at 64 is 32064); the multiple itself is the call's
  argument, no tensor size.

A size no such step reaches ("resize_token_embeddings(50000)" on 32000 rows) is still
ungrounded. RE2 over the bounded answer.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.suggestion.checks import MAX_SCAN_CHARS

__all__ = ["vocab_resize_numbers"]

_MAX_KNOWN = 400
_MAX_CALLS = 8
_RESIZE = linear(
    r"\bresize_token_embeddings\s*\(\s*(?:new_num_tokens\s*=\s*)?(?P<n>\d{1,9})?\b"
    r"(?P<args>[^)\n]{0,120})"
)
_PAD_TO = linear(r"\bpad_to_multiple_of\s*=\s*(?P<m>\d{1,6})\b")
_N, _ARGS = (_RESIZE.groupindex[name] for name in ("n", "args"))
_M = _PAD_TO.groupindex["m"]


def _derived(size: int, known: list[int], multiple: int) -> bool:
    if multiple > 1:
        return any(-(-k // multiple) * multiple == size for k in known)
    steps = {*known, 1}
    return any(size - k in steps or k - size in steps for k in known)


def vocab_resize_numbers(text: str, known: Iterable[int]) -> set[int]:
    """The numbers ``text`` gives ``resize_token_embeddings`` that ``known`` numbers derive
    (see the module docstring), with the ``pad_to_multiple_of`` each such call gives."""
    text = (text or "")[:MAX_SCAN_CHARS]
    grounded: set[int] = set()
    listed = sorted({k for k in known if k > 0})[:_MAX_KNOWN]
    for count, match in enumerate(_RESIZE.finditer(text)):
        if count >= _MAX_CALLS:
            break
        padded = _PAD_TO.search(match.group(_ARGS) or "")
        multiple = int(padded.group(_M)) if padded else 0
        if multiple:
            grounded.add(multiple)  # the call's argument, not a tensor size
        if match.group(_N) is None:
            continue  # len(tokenizer)
        size = int(match.group(_N))
        if size in listed or _derived(size, listed, 0) or _derived(size, listed, multiple):
            grounded.add(size)
    return grounded
