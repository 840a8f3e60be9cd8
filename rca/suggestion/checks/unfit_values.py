"""A setting the documentation says cannot get past the failure the incident shows.

``strict=False`` ignores missing and unexpected keys, so a ``size mismatch for ...`` still
raises; the fork start method cannot carry CUDA into worker processes; float32 weights take
twice the memory when memory or the KV cache is what ran out; an input sent unbatched cannot
meet a shape whose leading batch axis it lacks. Which value cannot fix which
failure is data, ``rca/knowledge/unfit-values.toml`` (one documented fact a row, with its
source); this module only reads an answer against it. The value is read in the parts the
answer says, not the ones it turns down (:func:`.negated_clauses.turned_down`: "use spawn
instead of fork"), and a row's ``unless`` words ("remove the mismatched keys, then load with
strict=False") keep it from applying. Linear time: RE2 (:mod:`ingest.linear_regex`) over at
most :data:`MAX_SCAN_CHARS` characters of each text.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ingest.linear_regex import LinearPattern
from ingest.linear_regex import compile as linear
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.negated_clauses import turned_down

__all__ = ["DATA", "UnfitValue", "applicable_rules", "load_rules", "unfit_value_violations"]

DATA = Path(__file__).resolve().parents[2] / "knowledge" / "unfit-values.toml"
_MAX_TEXTS = 40


@dataclass(frozen=True)
class UnfitValue:
    """One row of :data:`DATA`: a value that cannot get past one failure."""

    failure: str
    message: LinearPattern | None
    fact: str
    answer: LinearPattern
    unless: LinearPattern | None
    why: str
    source: str


@functools.cache
def load_rules(path: Path = DATA) -> tuple[UnfitValue, ...]:
    """The rows of the data file, their patterns compiled (RE2, case-insensitive)."""
    with path.open("rb") as handle:
        table = tomllib.load(handle)
    rules = []
    for row in table.get("rule", []):
        if not str(row.get("source", "")).startswith("https://"):
            raise ValueError(f"{path.name}: the rule for {row.get('failure')!r} needs a source")
        unless, message = row.get("unless"), row.get("message")
        if not message and not row.get("fact"):
            raise ValueError(f"{path.name}: the rule for {row['failure']!r} needs message or fact")
        rules.append(
            UnfitValue(
                str(row["failure"]),
                linear(str(message), ignore_case=True) if message else None,
                str(row.get("fact", "")),
                linear(str(row["answer"]), ignore_case=True),
                linear(str(unless), ignore_case=True) if unless else None,
                str(row["why"]),
                str(row["source"]),
            )
        )
    return tuple(rules)


def _said(action: str) -> str:
    """``action`` with the parts it turns down blanked out."""
    text = action[:MAX_SCAN_CHARS]
    for start, end in turned_down(text):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _shows(rule: UnfitValue, shown: list[str], facts: frozenset[str]) -> bool:
    """Whether the incident (its cut ``shown`` texts or its ``facts``) shows the failure."""
    message = rule.message
    return rule.fact in facts or bool(message and any(message.search(text) for text in shown))


def _shown(texts: Iterable[str]) -> list[str]:
    return [(text or "")[:MAX_SCAN_CHARS] for text in list(texts)[:_MAX_TEXTS]]


def applicable_rules(texts: Iterable[str], facts: Iterable[str] = ()) -> list[UnfitValue]:
    """The rows whose failure ``texts`` (the message and log lines) or ``facts`` show: the
    values an answer for this incident should not set (the prompt says so up front)."""
    shown, known = _shown(texts), frozenset(facts)
    return [rule for rule in load_rules() if _shows(rule, shown, known)]


def unfit_value_violations(
    action: str, texts: Iterable[str], facts: Iterable[str] = ()
) -> list[str]:
    """Why ``action`` sets a value that cannot get past the failure ``texts`` (the message
    and log lines) or the incident's ``facts`` show, one complaint a row (empty: it sets
    none)."""
    rules = load_rules()
    if not action or not rules:
        return []
    shown, said, known = _shown(texts), _said(action), frozenset(facts)
    complaints = []
    for rule in rules:
        match = rule.answer.search(said)
        if match is None or (rule.unless is not None and rule.unless.search(said)):
            continue
        if _shows(rule, shown, known):
            complaints.append(
                f"the incident shows {rule.failure}: {match.group(0).strip()!r} cannot fix"
                f" that ({rule.why})"
            )
    return complaints
