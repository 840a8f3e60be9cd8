"""When "set the pad token to the EOS token" is the cause, not the fix.

``tokenizer.pad_token = tokenizer.eos_token`` is the usual answer to "the tokenizer does not
have a padding token". It has a known cost: collators mask every pad id out of the labels
(``-100``), so when pad and EOS share one id the model is never trained on EOS and never
learns to stop; generation then runs to ``max_new_tokens``. An incident that reports that
symptom, or shows the two ids already equal, is not fixed by making them equal: the way
out is a distinct pad token, EOS kept in the labels, or the right ``eos_token_id`` passed
to generation. Two facts, read from the message and log lines (and the frames' code):

- :data:`NEVER_STOPS` (``generation-does-not-stop``): the text says generation does not
  stop, runs on to the maximum length, or never produces EOS ("keeps generating until
  max_new_tokens", "never generates the eos token", "the model doesn't learn to stop");
- :data:`SHARES_ID` (``pad-shares-eos-id``): the text says pad and EOS are one id
  ("pad_token_id == eos_token_id", "the pad token is the same as the eos token"), or a
  code or log line assigns one to the other (``tokenizer.pad_token = tokenizer.eos_token``,
  ``pad_token_id=tokenizer.eos_token_id``). Advice in a message ("Please select a token to
  use as `pad_token` (tokenizer.pad_token = tokenizer.eos_token e.g.)", transformers' own
  ValueError) and the generate notice "Setting `pad_token_id` to `eos_token_id`" are not
  read: they say what to do, not what was done.

Steps that set pad to EOS carry both in ``unless``; :mod:`rca.suggestion.checks.pad_eos`
fails a suggestion that does in any wording. Linear time: RE2 over capped lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["NEVER_STOPS", "SHARES_ID", "pad_eos_facts"]

NEVER_STOPS = "generation-does-not-stop"
SHARES_ID = "pad-shares-eos-id"


_EOS = (
    r"(?:eos|EOS|end[- ]of[- ](?:sequence|text|turn)|</s>|<\|endoftext\|>|<\|eot_id\|>"
    r"|<\|im_end\|>|stop)"
)
_NEVER_STOPS = linear(
    r"\b(?:never|not|n't|doesn.t|does not|don.t|do not|won.t|will not|can.t|cannot|fails? to)"
    r"\s+(?:\w+\s+){0,2}?(?:stop|stops|stopping|end|ends|terminate|terminates)"
    r"\s+(?:generating|generation|the generation|outputting|producing|talking|writing)\b"
    r"|\bgenerat\w*\s+(?:\w+\s+){0,2}?(?:never|doesn.t|does not|won.t|will not|not)\s+"
    r"(?:stop|stops|end|ends|terminate)\b"
    r"|\b(?:keeps?|kept|continues?|continued)\s+(?:on\s+)?(?:generating|generation|going"
    r"|producing|outputting)\b[^\n]{0,80}?\b(?:until|till|up to|to)\s+(?:the\s+)?"
    r"(?:max|maximum|max_new_tokens|max_length|max_tokens|length limit|token limit)"
    r"|\b(?:runs?|generates?|goes|continues?)\s+(?:on\s+)?(?:until|till|up to|to)\s+(?:the\s+)?"
    r"(?:max_new_tokens|max_length|max_tokens|maximum (?:length|number of (?:new )?tokens))\b"
    r"|\b(?:never|not|doesn.t|does not|don.t|do not|won.t|fails? to)\s+(?:\w+\s+){0,2}?"
    r"(?:generate|generates|produce|produces|emit|emits|output|outputs|predict|predicts"
    rf"|learn to generate|learn to output)\s+(?:an?\s+|the\s+|any\s+)?{_EOS}"
    r"(?:\s+token|_token)?\b"
    r"|\b(?:never|not|doesn.t|does not|don.t|do not|didn.t|did not|fails? to)\s+learn"
    r"(?:s|ed|ing)?\s+(?:\w+\s+){0,2}?(?:to\s+)?(?:stop|end)\b",
    ignore_case=True,
)
_PAD = r"(?:pad_token(?:_id)?|pad token(?: id)?|padding token(?: id)?|pad id|pad)"
_EOS_NAME = r"(?:eos_token(?:_id)?|eos token(?: id)?|eos id|eos|end[- ]of[- ]sequence token)"
_SAME = linear(
    rf"\b{_PAD}\s*(?:==|is\s+(?:the\s+same\s+as|equal\s+to|identical\s+to|also)"
    rf"|equals|=\s*=)\s*(?:the\s+)?{_EOS_NAME}\b"
    rf"|\b{_PAD}\s+and\s+(?:the\s+)?{_EOS_NAME}\s+(?:\w+\s+){{0,2}}?(?:are|is|share|have|use)"
    r"\s+(?:the\s+)?(?:same|identical|one|equal)\b"
    rf"|\b{_EOS_NAME}\s+and\s+(?:the\s+)?{_PAD}\s+(?:\w+\s+){{0,2}}?(?:are|is|share|have|use)"
    r"\s+(?:the\s+)?(?:same|identical|one|equal)\b",
    ignore_case=True,
)
#: An assignment statement opening a code or log line: the code did it.
_ASSIGNED = linear(
    r"^\s*(?:>>>\s*|\.\.\.\s*|\+\s*)?[\w.\[\]'\"]*\bpad_token(?:_id)?\s*=\s*[\w.\[\]'\"]*"
    r"\beos_token(?:_id)?\b"
    r"|^\s*(?:>>>\s*)?[\w.]*\(?[^\n#]{0,200}?\bpad_token_id\s*=\s*[\w.]*\beos_token_id\b",
)
#: Advice or a library's own notice: says what to do, not what was done.
_ADVICE = linear(
    r"\be\.g\.|\bplease\b|\byou (?:can|should|may|must)\b|\btry\b|\bselect a token\b"
    r"|\bSetting `?pad_token_id`? to `?eos_token_id`?|\bfor open-end generation\b",
    ignore_case=True,
)


def pad_eos_facts(texts: Sequence[str], code: Sequence[str] = ()) -> set[str]:
    """:data:`NEVER_STOPS` / :data:`SHARES_ID` from ``texts`` (message and log lines) and
    ``code`` (the frames' code lines and log lines, read for assignments only)."""
    facts: set[str] = set()
    for line in first_lines(texts):
        if _NEVER_STOPS.search(line):
            facts.add(NEVER_STOPS)
        if _SAME.search(line) and not _ADVICE.search(line):
            facts.add(SHARES_ID)
    if any(_ASSIGNED.search(line) and not _ADVICE.search(line) for line in first_lines(code)):
        facts.add(SHARES_ID)
    return facts
