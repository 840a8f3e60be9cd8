"""Whether an incident contradicts a step's premise, and whether a suggestion restates one.

A runbook step's premises are its ``unless``, ``sets`` and ``api`` conditions
(:mod:`rca.corpus.step_metadata`). They are checked against what the incident itself shows
(:mod:`.incident_facts`, :mod:`.incident_setting`); an unknown contradicts nothing. The same
checks run on every suggestion, offline or from an LLM, in :func:`premise_complaints`:

- the suggestion restates a step of its cited runbook (most of the step's own action words)
  whose premise the incident contradicts;
- the suggestion says what a step's ``says`` words name (stripping a key prefix, saving the
  unwrapped model), in any wording and citing any runbook, and the incident contradicts that
  step's premise;
- the suggestion turns on an option that the message says is already set to that value.

Either fails validation: the LLM is re-asked with the complaint, and a suggestion that still
fails is stored marked invalid, never shown as a trusted fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from ingest.linear_regex import compile as linear
from rca.corpus.step_metadata import FACTS, StepMetadata
from rca.suggestion.api_drift import drift_facts, read_drift
from rca.suggestion.incident_facts import incident_facts, terms
from rca.suggestion.incident_setting import log_texts, setting_of
from rca.suggestion.step_values import fill_values, incident_values, step_wordings

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = [
    "RESTATES_SHARE",
    "Premises",
    "contradictions",
    "premise_complaints",
    "read_premises",
    "restated_step",
    "said_steps",
]

RESTATES_SHARE = 0.6
"""A suggestion restates a step when its action holds at least this share of the words of
the step's action (asides dropped): the offline composer copies them all, an LLM that
rephrases keeps the option and API names. Not tuned on cases."""

_MAX_SCAN = 4000
#: Words by which an action changes an option rather than turning it on.
_UNSETS = linear(
    r"\b(?:disable|disabling|remove|removing|unset|turn(?:ing)? off|drop|dropping|stop"
    r"|avoid|instead of|false|off|no longer|rather than|lower|reduce|decrease|raise|increase)\b",
    ignore_case=True,
)
_BOLD = linear(r"\*\*(?P<action>.+?)\*\*", dotall=True)
#: The value an action gives an option right after naming it: ``=True``, `` to 4096``.
_GIVEN = linear(
    r"[`'\"]?\s*(?:(?:=|:)\s*[`'\"]?(?P<value>[\w.-]+)"
    r"|\s+to\s+[`'\"]?(?P<to>\d[\w.]*|true|false|on|off|none)\b)",
    ignore_case=True,
)
_ON = frozenset({"true", "1", "on", "yes", "enabled"})


@dataclass(frozen=True)
class Premises:
    """What an incident shows that a step's premise can contradict."""

    facts: frozenset[str]
    frameworks: frozenset[str]
    options_set: Mapping[str, str]

    def as_lines(self) -> list[str]:
        """The premises in words, for the prompt and the UI."""
        lines = [f"{name}: {FACTS[name]}" for name in sorted(self.facts) if name in FACTS]
        if self.frameworks:
            lines.append("frameworks in the code: " + ", ".join(sorted(self.frameworks)))
        for option, value in sorted(self.options_set.items()):
            lines.append(f"already set: {option}" + (f"={value}" if value else ""))
        return lines


class _Answer(Protocol):
    action: str
    reason: str
    runbook: str


def _code_texts(ctx: AnalysisContext) -> list[str]:
    texts = [str(frame.get("context_line") or "") for frame in ctx.frames]
    texts += [str(frame.get("function") or "") for frame in ctx.frames]
    texts += log_texts(ctx.logs)
    texts += [str(v) for v in (ctx.inference_context or {}).values() if isinstance(v, str)]
    return texts


def read_premises(ctx: AnalysisContext) -> Premises:
    """The incident's facts, frameworks and already-set options."""
    message = ctx.message or ""
    setting = setting_of(ctx)
    facts = incident_facts(message, list(ctx.shape_diff), _code_texts(ctx))
    facts |= drift_facts(read_drift(message, ctx.frames, log_texts(ctx.logs)))
    return Premises(facts, setting.frameworks, setting.options_set)


def contradictions(meta: StepMetadata, premises: Premises) -> list[str]:
    """Why the incident contradicts this step's premise, one phrase per condition (empty:
    it does not)."""
    reasons = [
        f"the incident shows {FACTS[fact]}" for fact in meta.unless if fact in premises.facts
    ]
    for option in meta.sets:
        if option in premises.options_set:
            reasons.append(f"the message says {option} is already set")
    if set(meta.variants) & premises.frameworks:
        return reasons  # worded for the incident's framework by its variant (step_values)
    if meta.api and premises.frameworks and not set(meta.api) & premises.frameworks:
        reasons.append(
            f"the step is written for {', '.join(meta.api)} but the incident's code is "
            + ", ".join(sorted(premises.frameworks))
        )
    return reasons


def _without_asides(text: str) -> str:
    """``text`` without its parenthetical asides (examples), whatever they nest."""
    out, depth = [], 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif not depth:
            out.append(char)
    return "".join(out)


def _step_action(step: str) -> str:
    match = _BOLD.search(step)
    text = match.group("action") if match else step.partition(" Reason:")[0]
    return _without_asides(text)


def restated_step(draft: _Answer, ctx: AnalysisContext) -> StepMetadata | None:
    """The metadata of the step of the cited runbook that the draft's action restates, if any
    (the best-covered one; of two covered alike, the one with more of its words said: a
    short step whose words all recur inside a longer one is not what the draft restates)."""
    action = set(terms((draft.action or "")[:_MAX_SCAN]))
    values = incident_values(ctx)  # a step naming {package} is restated with its value
    best: tuple[tuple[float, int], StepMetadata] | None = None
    for item in ctx.evidence:
        if item.kind != "runbook" or item.slug != (draft.runbook or "").strip():
            continue
        for position, step in enumerate(item.remediation):
            meta = item.step_metadata(position)
            # Each wording is its own premise: a step's PyTorch wording restated for a
            # TensorFlow incident is contradicted even when the step has a TensorFlow variant.
            for names, wording in step_wordings(step):
                words = set(terms(_step_action(fill_values(wording, values))))
                if not words:
                    continue
                share = len(words & action) / len(words)
                cover = (share, len(words & action))
                if share >= RESTATES_SHARE and (best is None or cover > best[0]):
                    api = names or meta.api
                    best = (cover, replace(meta, api=api, variants=()))
    return best[1] if best else None


def _sets_again(action: str, option: str, value: str) -> bool:
    """Whether ``action`` turns ``option`` on again (to the value it already has) rather
    than changing it: a new value, or words that turn it off, are a change."""
    at = action.lower().find(option.lower())
    if at < 0:
        return False
    given = _GIVEN.match(action, at + len(option))
    already_on = not value or value.lower() in _ON
    if given:
        new = (given.group("value") or given.group("to") or "").lower()
        return new == value.lower() or (not value and new in _ON)
    return already_on and not _UNSETS.search(action)


def said_steps(draft: _Answer, ctx: AnalysisContext) -> list[StepMetadata]:
    """The metadata of every step given to the draft's author (each runbook in the
    evidence) whose ``says`` words the draft's action holds, all of one phrase."""
    action = set(terms((draft.action or "")[:_MAX_SCAN]))
    found: list[StepMetadata] = []
    for item in ctx.evidence:
        if item.kind != "runbook":
            continue
        for position in range(len(item.remediation)):
            meta = item.step_metadata(position)
            if any(set(words) <= action for words in map(terms, meta.says) if words):
                found.append(meta)
    return found


def premise_complaints(draft: _Answer, ctx: AnalysisContext, premises: Premises) -> list[str]:
    """What in the draft the incident contradicts, phrased for its author."""
    complaints: list[str] = []
    action = (draft.action or "")[:_MAX_SCAN]
    for option, value in premises.options_set.items():
        if _sets_again(action, option, value):
            shown = f"{option}={value}" if value else option
            complaints.append(
                f"the message says {shown} is already set: do not suggest setting it again;"
                " find why the failure happens with it set"
            )
    meta = restated_step(draft, ctx)
    reasons = contradictions(meta, premises) if meta is not None else []
    for said in said_steps(draft, ctx):
        reasons += [reason for reason in contradictions(said, premises) if reason not in reasons]
    if reasons:
        complaints.append(
            "the suggested step does not apply to this incident: " + "; ".join(reasons)
        )
    return complaints
