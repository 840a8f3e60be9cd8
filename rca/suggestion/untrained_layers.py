"""Whether a non-strict load would leave the layers the message lists as missing untrained.

PyTorch's ``load_state_dict(strict=False)`` does not raise for keys the state_dict lacks: it
returns them as ``missing_keys`` and leaves those parameters as the module's constructor
initialised them (the documented return value; PyTorch's forum answer on fine-tuning: "no
error will be raised if keys are missing"). When the message lists missing keys that are
learned weights (``weight``, ``bias``: :data:`.state_dict_keys.PARAMETER_NAMES`), loading
non-strictly reports success and serves or trains those layers at random values: right only
when the layers are new ones meant to be trained (a head added for fine-tuning), which the
answer then says. Keys that are a buffer or two repeated across layers
(``num_batches_tracked``) are the harmless case and are not read as layers. A prefix on
every key (:mod:`.prefix_shift`) has its own complaint, so it is not repeated here.

Linear: RE2 patterns over a bounded answer; the key lists are read by
:func:`.state_dict_keys.read_key_lists`.
"""

from __future__ import annotations

from ingest.linear_regex import compile as linear
from rca.suggestion.key_prefix_sides import ShownKeys
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.prefix_shift import prefix_shift, reads_non_strict
from rca.suggestion.state_dict_keys import PARAMETER_NAMES, read_key_lists

__all__ = ["loads_non_strict", "missing_layer_violations"]

_MAX_TEXT = 4000
#: The answer says the missing layers are new ones to be trained, not pretrained ones lost.
_MEANT_NEW = linear(
    r"\b(?:newly|randomly|freshly|re-?)\s*initiali[sz]ed\b"
    r"|\binitiali[sz]ed?\s+(?:them\s+|it\s+)?(?:randomly|from\s+scratch|fresh)\b"
    r"|\b(?:new|added|fresh|extra)\s+(?:\w+\s+)?(?:head|heads|layers?|classifier|modules?)\b"
    r"|\btrain(?:ed|s|ing)?\s+(?:\w+\s+){0,3}?from\s+scratch\b"
    r"|\b(?:are|is)\s+(?:meant|supposed|expected|intended)\s+to\s+be\s+(?:new|trained)\b",
    ignore_case=True,
)


#: ``strict`` turned off in other spellings than :func:`.prefix_shift.reads_non_strict` reads:
#: positionally (``load_state_dict(state_dict, strict=True)`` is PyTorch's signature, so
#: ``load_state_dict(sd, False)`` is non-strict) and in prose ("pass strict as False", "set
#: strict to False", "with strict False").
_STRICT_OFF = (
    linear(
        r"\bload_state_dict\(\s*[^,()]{1,200}(?:\([^()]{0,200}\))?[^,()]{0,200},\s*False\s*[,)]"
    ),
    linear(
        r"\bstrict\b[`'\"]?\s+(?:(?:set\s+)?(?:as|to|at|of|=)\s+|being\s+|)[`'\"]?False\b",
        ignore_case=True,
    ),
)


def loads_non_strict(action: str) -> bool:
    """Whether ``action`` turns ``strict`` off, in any spelling, outside a part it turns down."""
    text = (action or "")[:_MAX_TEXT]
    if reads_non_strict(text):
        return True
    for start, end in turned_down(text):
        text = text[:start] + " " * (end - start) + text[end:]
    return any(pattern.search(text) for pattern in _STRICT_OFF)


def _learned(keys: tuple[str, ...]) -> list[str]:
    return [key for key in keys if key.rsplit(".", 1)[-1] in PARAMETER_NAMES]


def missing_layer_violations(action: str, reason: str, message: str) -> list[str]:
    """Why loading non-strictly would leave learned layers the message lists as missing at
    their random initialisation (empty: it does not load non-strictly, no learned weight is
    listed missing, the keys differ by a prefix, or the answer says the layers are new)."""
    lists = read_key_lists((message or "")[: _MAX_TEXT * 4])
    learned = _learned(lists.missing)
    if not learned or not loads_non_strict(action):
        return []
    shifted = prefix_shift(ShownKeys(lists.unexpected, lists.missing, lists.cut)) is not None
    if shifted and reads_non_strict(action or ""):
        return []  # :func:`.prefix_shift.non_strict_violations` says it
    if _MEANT_NEW.search(f"{action or ''}\n{reason or ''}"[:_MAX_TEXT]):
        return []
    shown = ", ".join(learned[:3]) + (", ..." if len(learned) > 3 else "")
    return [
        f"the message lists learned weights the checkpoint lacks ({shown}): a non-strict load"
        " leaves those layers at their random initialisation and reports success; make the"
        " checkpoint's keys match the model's (or say those layers are new and will be trained)"
    ]
