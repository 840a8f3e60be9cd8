"""Remove secrets and personal data from incidents before anything is stored.

Tracebacks and logs routinely carry API keys, bearer tokens and connection strings, and
whatever we store is later sent to an LLM provider and to Slack. Scrubbing runs first, on
every string of the payload, and replaces each finding with ``[redacted:<kind>]`` so the
reader still sees that something was there; the prompt and Slack payload builders pass
their text through :func:`scrub_text` again, as a second line of defence.

Patterns are deliberately specific: tensor shapes, file paths, line numbers and ML
settings such as ``max_tokens=512`` must survive. Names (exception types, frame
``filename``/``function``/``module``) are only checked for unmistakable tokens, never by
the ``KEY=value`` rules, so ``..., PublicKeyToken=7cec85d7bea7798e`` keeps its class name.
Every pattern is RE2 (``ingest.linear_regex``): linear time on any input.
"""

from __future__ import annotations

from typing import Any

import re2

from ingest.scrubbing import substitute
from ingest.scrubbing.names import redacts, secret_name
from ingest.scrubbing.patterns import ASSIGNMENT_RULE, NAME_RULES, PREFILTER, TEXT_RULES, Rule

MAX_DEPTH = 64
# Matches one scrub may examine (each costs a few µs); a real incident has a handful, so
# only text built to be slow reaches it, and past it the rest is cut, not kept.
MAX_MATCHES = 10_000
_MARKER = "[redacted:"
# Fields that hold a name, not prose: an exception type, a frame's location.
NAME_FIELDS = frozenset(
    {"error_type", "type", "filename", "abs_path", "function", "raw_function", "module"}
)

__all__ = [
    "is_secret_key",
    "scrub",
    "scrub_name",
    "scrub_parsed",
    "scrub_text",
    "scrub_with_count",
]


class _Tally:
    """Redactions made so far, and the match budget one scrub shares across its strings;
    `present`, when known, the triggers the whole (ASCII) document holds (`scrub_parsed`)."""

    __slots__ = ("budget", "present", "redactions")

    def __init__(self, present: tuple[str, ...] | None = None) -> None:
        self.redactions = 0
        self.budget = substitute.Budget(MAX_MATCHES)
        self.present = present


def _apply(text: str, rules: tuple[Rule, ...], tally: _Tally) -> str:
    if not text:
        return text
    if tally.present is not None and text.isascii():
        # ASCII: the prefilter finds a trigger iff one is a substring of the lowercased
        # text, and only those the document holds can be (~0.2 us, not ~1.5 us for RE2).
        low = text.lower()
        if not any(trigger in low for trigger in tally.present):
            return text
    elif PREFILTER.search(text) is None:
        return text
    if tally.budget.left <= 0:
        tally.redactions += 1
        return substitute.TOO_MANY
    low = text.lower()  # the triggers of the original text: a superset of what is left
    before = low.count(_MARKER)
    for rule in rules:
        if any(trigger in low for trigger in rule.triggers):
            text = substitute.sub(rule.pattern, rule.replace, text, tally.budget)
    # A rule may hand a match back unchanged (``pad_token=<pad>``): count markers instead.
    tally.redactions += max(text.count(_MARKER) - before, 0)
    return text


def scrub_text(text: str) -> str:
    """Redact secrets inside one string (the prompt and Slack boundaries call this)."""
    return _apply(text, TEXT_RULES, _Tally())


def scrub_name(text: str) -> str:
    """Redact only unmistakable tokens in a name (type, filename, function, module)."""
    return _apply(text, NAME_RULES, _Tally())


def is_secret_key(key: Any) -> bool:
    """Tell whether a mapping key names a secret (``password``, ``OPENAI_API_KEY``, ...)."""
    return isinstance(key, str) and secret_name(key) is not None


def _secret_value(key: Any, item: Any) -> str | None:
    """The marker replacing ``item`` when ``key`` names a secret, else None."""
    if not isinstance(key, str) or item in (None, "", [], {}):
        return None
    found = secret_name(key)
    if found is None:
        return None
    if isinstance(item, str) and not redacts(found, item.strip()):
        return None
    if not isinstance(item, str) and not found.strong and isinstance(item, (int, float, bool)):
        return None  # "token": 3 counts tokens
    return f"{_MARKER}{found.kind}]"


def _scrub(value: Any, tally: _Tally, depth: int) -> Any:
    if isinstance(value, str):
        return _apply(value, TEXT_RULES, tally)
    if depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
        tally.redactions += 1
        return f"{_MARKER}too_deep]"
    if isinstance(value, dict):
        result: dict[Any, Any] = {}
        for key, item in value.items():
            marker = _secret_value(key, item)
            if marker is not None:
                tally.redactions += 1
                result[key] = marker
            elif key in NAME_FIELDS and isinstance(item, str):
                result[key] = _apply(item, NAME_RULES, tally)
            else:
                result[key] = _scrub(item, tally, depth + 1)
        return result
    if isinstance(value, (list, tuple)):
        return [_scrub(item, tally, depth + 1) for item in value]
    return value


def scrub_with_count(value: Any) -> tuple[Any, int]:
    """Scrub strings, dicts and lists recursively; return the copy and how many redactions."""
    tally = _Tally()
    return _scrub(value, tally, 0), tally.redactions


def scrub(value: Any) -> Any:
    """Return a copy of ``value`` with every secret we recognise replaced by a marker."""
    return scrub_with_count(value)[0]


#: Every text rule's trigger, lowercased (all ASCII): what the prefilter looks for.
_TRIGGERS = tuple(sorted({t.lower() for rule in TEXT_RULES for t in rule.triggers}))
# Secret names whose words hold no trigger: ``pass_phrase`` (``pass``, ``phrase``).
_NAME_WITHOUT_TRIGGER = "phrase"


def _finds_nothing_in(text: str) -> bool:
    """True when no string of the JSON document `text`, and no key, has anything to scrub.

    In ASCII JSON without ``\\u`` or ``\\/`` escapes, every string (key or value) appears
    in the text as it is, but for escaped quotes, backslashes and control characters,
    which no trigger holds: a trigger in any of them is a trigger in the text. Without
    one, ``_apply`` returns every string unchanged (its first test), and no key is a
    secret name: each name ``secret_name`` knows holds a trigger word (password, pwd,
    secret, token, key, authorization, cookie) or ``phrase`` (``pass_phrase``).
    ASCII keeps case folding plain: RE2 matches ``K`` (Kelvin) as ``k``.
    """
    return (
        text.isascii()
        and "\\u" not in text
        and "\\/" not in text
        and PREFILTER.search(text) is None
        and _NAME_WITHOUT_TRIGGER not in text.lower()
    )


def _within_depth(value: Any, text: str) -> bool:
    """True when no container of `value` sits at MAX_DEPTH or deeper (no ``too_deep``)."""
    if text.count("{") + text.count("[") <= MAX_DEPTH:
        return True  # fewer openers than levels: two C-speed counts, most documents
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH):
        level = [
            item
            for container in level
            for item in (container.values() if isinstance(container, dict) else container)
            if isinstance(item, (dict, list, tuple))
        ]
        if not level:
            return True
    return False


def scrub_parsed(value: Any, text: str) -> Any:
    """``scrub(value)`` for a value read from the JSON document ``text`` (or ``storable`` of
    it, which turns no string into one with a trigger): ``value`` itself, not a copy, when
    the text shows nothing to scrub; the inbox processor has each payload's text, and
    most incidents hold no secret, so their walk of every string is skipped. Otherwise,
    in an ASCII document, each string is screened for the few triggers the document holds
    (any trigger of one of its strings is in it, see `_finds_nothing_in`) instead of by
    the prefilter: `release: app@1.2` or `framework_version` need not cost an RE2 call
    per string."""
    if not (text.isascii() and "\\u" not in text and "\\/" not in text):
        return scrub(value)
    low = text.lower()
    present = _triggers_in(text, low)
    # No trigger and no `phrase` is `_finds_nothing_in` (in ASCII text the prefilter finds a
    # trigger iff one is a substring of `low`): one scan of the text, not two (issue 19).
    nothing = not present and _NAME_WITHOUT_TRIGGER not in low
    if (nothing or _no_rule_matches(text, present, low)) and _within_depth(value, text):
        return value
    return _scrub(value, _Tally(present), 0)


def _no_rule_matches(text: str, present: tuple[str, ...], low: str | None = None) -> bool:
    """True when no rule whose trigger the ASCII document `text` holds matches anywhere in
    it, and no key is a secret name: then no string has anything to scrub.

    Every Sentry event holds a trigger (its release is `name@version`, the email rule's
    `@`), so without this each of its strings would be screened. Sound only without a
    backslash: then every string stands in the text verbatim between two quotes, so a
    rule's match in a string is a match in the text (the same characters; a quote is no
    word character for `\\b`, and is in the azure rule's class for `^`). With one, an
    escape's last character (`n` of `\\n`) could undo a `\\b` the string has. Keys: each
    secret name holds a trigger of the assignment rule or `phrase` (`_finds_nothing_in`).
    `present`: the triggers `text` holds (`_triggers_in`); a rule's trigger is in the
    lowercased text iff it is among them (rules' triggers are lowercase; one that is not
    was never in the lowercased text either).
    """
    if "\\" in text or _NAME_WITHOUT_TRIGGER in (text.lower() if low is None else low):
        return False
    found = frozenset(present)
    if any(trigger in found for trigger in ASSIGNMENT_RULE.triggers):
        return False
    rules = (rule for rule in TEXT_RULES if any(trigger in found for trigger in rule.triggers))
    return not any(rule.pattern.search(text) for rule in rules)


def _literal_set(words: tuple[str, ...]) -> re2.Set:
    """An RE2 set of `words` as literals: which of them a text holds, in one pass."""
    found = re2.Set.SearchSet(re2.Options())
    for word in words:
        found.Add(re2.escape(word))
    found.Compile()
    return found


_TRIGGER_SET = _literal_set(_TRIGGERS)


def _triggers_in(text: str, low: str | None = None) -> tuple[str, ...]:
    """The triggers the ASCII document holds, in `_TRIGGERS`' order. In ASCII text the
    prefilter finds a trigger iff it is a substring of the lowercased text (see `_apply`),
    so the answer is every trigger that is a substring of it, overlapping ones included (a
    superset of what the prefilter reports position by position: a string holding one is
    screened in). One pass of an RE2 set of the triggers as literals (linear in the text,
    an automaton of their ~200 characters) answers: 3 us for a 1.2 KB Sentry event against
    ~40 us for a substring test per trigger (46), which is what runs if the set reports
    none (it reports nothing, never a part, if its automaton could not run). (It once asked
    the prefilter again after each trigger it found, and each call re-encoded the whole
    document: quadratic, 56 s for a 1 MB document of `@`.) `low`: `text.lower()`, when the
    caller has it."""
    low = text.lower() if low is None else low
    hits = _TRIGGER_SET.Match(low)
    if not hits:
        if PREFILTER.search(text) is None:
            return ()  # none at all (the common case of a set reporting nothing): one scan
        return tuple(trigger for trigger in _TRIGGERS if trigger in low)
    return tuple(_TRIGGERS[i] for i in sorted(hits))
