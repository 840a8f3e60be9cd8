"""A suggestion that sets the pad token to the EOS token when that is the cause.

When :mod:`rca.suggestion.pad_eos` reads ``generation-does-not-stop`` (the model runs on to
``max_new_tokens``, never produces EOS) or ``pad-shares-eos-id`` (the two already share one
id), "set ``tokenizer.pad_token = tokenizer.eos_token``" repeats what causes it: collators
mask the pad id out of the labels, EOS with it, so the model never learns to stop. Runbook
steps that reuse EOS as pad carry both facts in ``unless``; this check catches the same
action in any wording, from any runbook or an LLM, so validation fails it whoever wrote it.

An action that says to keep them apart ("add a dedicated pad token instead of reusing EOS",
"do not set pad_token = eos_token") is not failed. Linear time: RE2
(:mod:`ingest.linear_regex`) over at most :data:`MAX_SCAN_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.pad_eos import NEVER_STOPS, SHARES_ID

__all__ = ["pad_eos_violations", "sets_pad_to_eos"]

_SETS_CODE = linear(
    r"\bpad_token(?:_id)?\s*=\s*[\w.\[\]'\"]*\beos_token(?:_id)?\b"
    r"|['\"]pad_token['\"]\s*:\s*[\w.]*\beos_token\b",
)
_SETS_PROSE = linear(
    r"\b(?:set|setting|use|using|reuse|reusing|make|assign|map)\s+(?:the\s+)?"
    r"(?:pad(?:ding)?(?:\s+token)?(?:\s+id)?|pad_token(?:_id)?)\s+(?:to|as|=|equal\s+to)\s+"
    r"(?:the\s+)?(?:eos|end[- ]of[- ]sequence)"
    r"|\b(?:use|using|reuse|reusing)\s+(?:the\s+)?(?:eos|end[- ]of[- ]sequence)(?:\s+token)?"
    r"(?:\s+id)?\s+(?:as|for)\s+(?:the\s+)?pad",
    ignore_case=True,
)
#: The action keeps them apart: it names the way out.
_KEEPS_APART = linear(
    r"\binstead\s+of\b|\brather\s+than\b|\bdo\s+not\b|\bdon.t\b|\bnever\b|\bnot\s+(?:set|reuse|use)"
    r"|\bdistinct\b|\bdedicated\b|\bseparate\b|\bdifferent\b|\bown\s+pad\b|\bnew\s+pad\b"
    r"|\badd_special_tokens\b|\bunk_token\b",
    ignore_case=True,
)


def sets_pad_to_eos(action: str) -> bool:
    """Whether ``action`` makes the pad token (or its id) the EOS one."""
    text = (action or "")[:MAX_SCAN_CHARS]
    return bool(_SETS_CODE.search(text) or _SETS_PROSE.search(text))


def pad_eos_violations(action: str, facts: Iterable[str]) -> list[str]:
    """Why reusing EOS as pad cannot fix this incident (empty: it may, or the action does
    not, or it keeps the two apart)."""
    shown = set(facts)
    if not shown & {NEVER_STOPS, SHARES_ID} or not sets_pad_to_eos(action):
        return []
    if _KEEPS_APART.search((action or "")[:MAX_SCAN_CHARS]):
        return []
    return [
        "do not set the pad token to the EOS token: the incident shows generation does not"
        " stop or the two already share one id, and masking pad out of the labels masks EOS"
        " with it; give pad its own id (add a pad token, or use another unused one), keep EOS"
        " in the labels, and pass the model's eos_token_id to generation"
    ]
