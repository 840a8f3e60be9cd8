"""Which runbook remediation step fits this incident best, among those that validate.

Each step of the best runbook, and of the runbooks of the same failure class that retrieval ranked
nearly as high, is scored by general mechanisms only: how well its runbook ranked, its place in the
runbook (runbooks list the most common fix first), the words it shares with the incident's own
code, logs and message (weighted by how rare they are among the retrieved steps; the words of all
its wordings, so that which framework's wording is shown does not move it), and what its runbook's
``Applies:`` line says (training or serving, the frameworks it is written for, the facts it fits)
against what :mod:`.incident_view` reads from the incident. The weights are
:mod:`.offline_weights`. Only steps whose premises the incident does not contradict
(:mod:`rca.suggestion.premises`) and whose composed suggestion passes validation compete: a
contradicted step is never the action, whatever its score.

A step that quotes the error's own wording as its condition ("when the error says `Trying to
connect an http1.x server`") and whose quote the message or error log lines say
(:mod:`rca.suggestion.quoted_wording`) scores as a fitting fact, and its place in the runbook does
not count against it: the runbooks' order is the prior for when nothing in the incident tells the
steps apart.

A step that applies the remedy the error message names itself (``{message-advice}``,
:mod:`rca.suggestion.message_advice`) competes from any retrieved runbook, scored by one flat
weight only (:attr:`OfflineWeights.message_advice`), lower than a fitting runbook step scores: it
wins when no runbook step fits well. It does not compete when the incident rules the advice out
(shown done, or a condition of it contradicted: :mod:`rca.suggestion.advice_conditions`). A
release-notes row that matches the incident adds steps (:mod:`.documented_steps`); a step that only
upgrades what the logs show at its newest does not (:mod:`rca.suggestion.fresh_installs`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rca.corpus.step_metadata import StepMetadata
from rca.suggestion.advice_conditions import advice_ruled_out
from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.fresh_installs import step_repeats_fresh_install
from rca.suggestion.incident_facts import terms
from rca.suggestion.incident_setting import ALIASES, PACKAGES
from rca.suggestion.message_advice import error_log_texts, first_remedy
from rca.suggestion.premises import Premises, contradictions, read_premises
from rca.suggestion.providers.documented_steps import documented_steps
from rca.suggestion.providers.draft import Draft
from rca.suggestion.providers.incident_view import IncidentView, read_incident
from rca.suggestion.providers.message_names import message_option_names, points_at
from rca.suggestion.providers.offline_weights import WEIGHTS
from rca.suggestion.providers.wording import compose, drop_asides, split_step
from rca.suggestion.quoted_wording import quoted_text, quotes_incident
from rca.suggestion.step_values import fill_values, incident_values, step_wordings
from rca.suggestion.validation import validate

__all__ = ["Candidate", "CandidateAudit", "audit_candidates", "rank_steps"]

#: Bare framework names (``tf``, ``keras``, ``optax``), left out of a variant's words: a
#: variant spells its framework by construction, so the name would match every incident of
#: that framework and favour the steps that have a variant for it over the steps that need
#: none. Which framework the incident is counts once, in the setting score and the ``api``
#: premise.
_FRAMEWORK_NAMES = frozenset(PACKAGES) | frozenset(ALIASES)
#: How a step names the message's own remedy (:mod:`rca.suggestion.step_values`).
ADVICE_PLACEHOLDER = "{message-advice}"


@dataclass
class Candidate:
    evidence: Evidence
    position: int  # 0-based place of the step in its runbook
    action: str  # as it will be suggested (shortened to the limits, validated)
    reason: str
    action_tokens: set[str]  # words of the wording shown (the alternative's rewording check)
    reason_tokens: set[str]
    applies: StepMetadata
    score: float = 0.0
    #: The words of the step's actions and reasons in all its wordings (``_step_tokens``):
    #: what it is scored by, whichever framework's wording ``action`` shows.
    step_action_tokens: set[str] = field(default_factory=set)
    step_reason_tokens: set[str] = field(default_factory=set)
    #: The score's terms by mechanism (``runbook``, ``position``, ``overlap``, ``setting``,
    #: ``fact``; or ``advice`` alone; they sum to ``score``): what ``bench/step_choice.py``
    #: re-weighs.
    parts: dict[str, float] = field(default_factory=dict)
    #: The step applies the remedy the message names (``{message-advice}``): its confidence
    #: is capped (:attr:`OfflineWeights.advice_confidence_cap`).
    advice: bool = False
    #: Added to ``score`` for the order only, not for the confidence (``_setting_bet``).
    preference: float = 0.0
    #: The step fills the release-notes row that matches the incident: its runbook gap is
    #: at most a sibling runbook's (:mod:`.documented_steps`).
    documented: bool = False


def _gap(item: Evidence, top: Evidence) -> float:
    """How far ``item``'s retrieval score is below the top runbook's, in the fused score's own
    units (a share of the fusion's ceiling, :func:`rca.retrieval.fusion.ceiling`). A difference,
    not a ratio: a ratio shrinks with every term all runbooks share (the raw cosine's offset)."""
    return 0.0 if item is top else max(float(top.score) - float(item.score), 0.0)


def _advice_only(item: Evidence) -> bool:
    """Whether every step of a runbook applies the message's own advice: such a runbook
    lends its step as the advice candidate, never as the top runbook that would keep a
    specific runbook ranked below it from lending its steps."""
    return bool(item.remediation) and all(ADVICE_PLACEHOLDER in s for s in item.remediation)


def _candidate_runbooks(ctx: AnalysisContext) -> list[Evidence]:
    """The top runbook and the ones of its failure class ranked nearly as high. A runbook
    that only applies the message's advice is not one of them; when retrieval ranks it
    first, the best other runbook lends steps only if it is a clear runner-up (the same
    :attr:`~OfflineWeights.max_score_gap` as a sibling runbook needs)."""
    runbooks = [item for item in ctx.evidence if item.kind == "runbook"]
    if not runbooks:
        return []
    best = sorted(runbooks, key=lambda item: -float(item.score))[0]
    ordered = sorted(  # stable: ties keep order
        (item for item in runbooks if not _advice_only(item)), key=lambda item: -float(item.score)
    )
    if not ordered:
        return []
    top = ordered[0]
    if _gap(top, best) > WEIGHTS.max_score_gap:
        return []
    chosen = [top]
    for item in ordered[1 : WEIGHTS.candidate_runbooks]:
        if item.failure_class == top.failure_class and _gap(item, top) <= WEIGHTS.max_score_gap:
            chosen.append(item)
    return chosen


def _valid_wording(
    source: Evidence, step: str, ctx: AnalysisContext, premises: Premises
) -> tuple[str, str] | None:
    """The step as a suggestion that passes validation (premises included): as written,
    else without its parenthetical examples (which may name axes or sizes this incident does
    not have). None for a step whose premise the incident contradicts: it is never the action."""
    action, reason = split_step(step)
    variants = [(action, reason), (drop_asides(action), drop_asides(reason))]
    for variant_action, variant_reason in dict.fromkeys(variants):
        composed = compose(source, variant_action, variant_reason, ctx)
        draft = Draft(*composed, runbook=source.slug, confidence=0.0, provider="", model="")
        if validate(draft, ctx, premises).ok:
            return composed
    return None


def _names_fact(tokens: set[str], words: frozenset[str]) -> bool:
    """Whether a step's words name a fact word ("embed" also matches "embedding")."""
    return any(
        token == word or (len(word) >= 4 and token.startswith(word))
        for token in tokens
        for word in words
    )


def _candidates(
    runbooks: list[Evidence], ctx: AnalysisContext, premises: Premises
) -> list[Candidate]:
    """Every step of ``runbooks``, and each step a matching release-notes row makes a
    candidate (:mod:`.documented_steps`), filled, validated and not contradicted."""
    candidates: list[Candidate] = []
    values = incident_values(ctx)
    documented, joining = documented_steps(ctx, values, runbooks)
    steps = [(item, position) for item in runbooks for position in range(len(item.remediation))]
    steps += joining
    for item, position in steps:
        written = item.remediation[position]
        if ADVICE_PLACEHOLDER in written:
            continue  # scored as the message's advice (_advice_candidate)
        if contradictions(item.step_metadata(position), premises, "", fill_values(written, values)):
            continue  # its filled wording is read for the step-relative facts (driver target)
        candidate = _filled(item, position, written, values, ctx, premises)
        if candidate is None:
            continue
        candidate.step_action_tokens, candidate.step_reason_tokens = _step_tokens(written, values)
        candidate.documented = (item.slug, position) in documented
        candidates.append(candidate)
    return candidates


def _filled(
    item: Evidence,
    position: int,
    written: str,
    values: dict[str, str],
    ctx: AnalysisContext,
    premises: Premises,
    advice: bool = False,
) -> Candidate | None:
    """Step ``position`` of ``item`` filled with the incident's values, as a candidate with
    the words it shows; None when its wording does not validate."""
    step = fill_values(written, values)
    wording = _valid_wording(item, step, ctx, premises)
    if wording is None or step_repeats_fresh_install(wording[0], ctx):  # a no-op here
        return None
    action, reason = split_step(step)
    shown = set(terms(action)), set(terms(reason))
    meta = item.step_metadata(position)
    return Candidate(item, position, *wording, *shown, meta, advice=advice)


def _advice_candidate(ctx: AnalysisContext, premises: Premises) -> Candidate | None:
    """The first step of a retrieved runbook that applies the message's own remedy, filled
    and validated, unless the incident rules the advice out; None when there is none."""
    advice = first_remedy(ctx.message or "", error_log_texts(ctx.logs))
    if advice is None or advice_ruled_out(advice, premises, ctx.inference_context):
        return None
    values = incident_values(ctx)
    for item in ctx.evidence:
        if item.kind != "runbook":
            continue
        for position, written in enumerate(item.remediation):
            meta = item.step_metadata(position)
            if ADVICE_PLACEHOLDER not in written or contradictions(meta, premises):
                continue
            candidate = _filled(item, position, written, values, ctx, premises, advice=True)
            if candidate is None:
                continue
            candidate.step_action_tokens = candidate.action_tokens
            candidate.step_reason_tokens = candidate.reason_tokens
            candidate.parts = {"advice": WEIGHTS.message_advice}
            candidate.score = WEIGHTS.message_advice
            return candidate
    return None


def _step_tokens(written: str, values: dict[str, str]) -> tuple[set[str], set[str]]:
    """The words of a step's actions and of its reasons in every wording it has (its own and
    each framework variant's), values filled. A step is scored by these, not by the wording
    shown: the same failure in another framework's words then ranks the steps alike, and a
    variant's words (``clipnorm``) still count for an incident that uses them."""
    action_tokens: set[str] = set()
    reason_tokens: set[str] = set()
    for names, text in step_wordings(written):
        action, reason = split_step(fill_values(text, values))
        dropped = _FRAMEWORK_NAMES if names else frozenset()
        action_tokens.update(set(terms(action)) - dropped)
        reason_tokens.update(set(terms(reason)) - dropped)
    return action_tokens, reason_tokens


def _rarity(ctx: AnalysisContext) -> Callable[[str], float]:
    """How rare each word is among all the retrieved runbooks' steps: a word most steps share
    ("model", "tensor") says little about which step fits."""
    documents = [
        set(terms(step))
        for item in ctx.evidence
        if item.kind == "runbook"
        for step in item.remediation
    ]
    frequency: dict[str, int] = {}
    for document in documents:
        for token in document:
            frequency[token] = frequency.get(token, 0) + 1

    def rarity(token: str) -> float:
        return math.log((len(documents) + 1) / (frequency.get(token, 0) + 0.5))

    return rarity


def _declared_frameworks(ctx: AnalysisContext) -> frozenset[str]:
    """Every framework name the retrieved steps are written for."""
    return frozenset(
        name
        for item in ctx.evidence
        if item.kind == "runbook"
        for meta in item.applies
        for name in meta.frameworks
    )


def _setting_score(applies: StepMetadata, incident: IncidentView, named: frozenset[str]) -> float:
    """Training vs serving, and the framework, of a step against the incident's."""
    score = 0.0
    if applies.mode and incident.mode:
        score += WEIGHTS.mode if applies.mode == incident.mode else -WEIGHTS.mode
    own = set(applies.frameworks)
    if own & named:
        score += WEIGHTS.framework
    elif own and named:  # written for another framework than the one the incident names
        score -= WEIGHTS.framework
    return score


def _setting_bet(applies: StepMetadata, incident: IncidentView) -> float:
    """How much a step marked for one setting (training or serving) ranks below its score
    when the incident does not tell which setting it is: the step is then a bet on the
    setting, and a step that fixes both goes first on equal scores
    (:attr:`~OfflineWeights.mode_unknown`). A ranking preference, not part of the score: the
    confidence map was fitted on scores without it."""
    return -WEIGHTS.mode_unknown if applies.mode and not incident.mode else 0.0


def _fact_score(candidate: Candidate, incident: IncidentView, quoted: bool, points: bool) -> float:
    """The incident's figures for the step (``fits``, a named tensor or prefix, the error wording
    it quotes as its condition: ``quoted``, an option the message points at: ``points``,
    :mod:`.message_names`). Figures against it (``unless``) are premises, never scored."""
    applies, score = candidate.applies, 0.0
    if (
        quoted
        or points
        or set(applies.fits) & incident.facts
        or _names_fact(candidate.step_action_tokens, incident.fact_words)
    ):
        score += WEIGHTS.fact
    elif _names_fact(candidate.step_reason_tokens, incident.fact_words):
        score += WEIGHTS.reason_share * WEIGHTS.fact
    return score


def rank_steps(ctx: AnalysisContext) -> list[Candidate]:
    """Every step of the candidate runbooks that validates, best fit for this incident first."""
    runbooks = _candidate_runbooks(ctx)
    premises = read_premises(ctx)
    candidates = _candidates(runbooks, ctx, premises)
    advice = _advice_candidate(ctx, premises) if WEIGHTS.message_advice > 0 else None
    if not candidates:
        return [advice] if advice else []
    incident = read_incident(ctx)
    rarity = _rarity(ctx)
    named = _declared_frameworks(ctx) & incident.whole

    def shared(tokens: set[str]) -> float:
        return sum(incident.words.get(token, 0.0) * rarity(token) for token in tokens)

    # Relative to the best-retrieved runbook, an advice-only one included: a runbook ranked
    # below the message's advice is that much less likely to be about this failure.
    top = ctx.top_runbook or runbooks[0]
    shown = quoted_text(ctx.error_type or "", ctx.message or "", error_log_texts(ctx.logs))
    pointed = message_option_names(ctx)

    def gap(candidate: Candidate) -> float:  # a row's step ranks as a sibling runbook's at worst
        found = _gap(candidate.evidence, top)
        return min(found, WEIGHTS.max_score_gap) if candidate.documented else found

    for candidate in candidates:
        own = candidate.step_action_tokens
        overlap = shared(own) + WEIGHTS.reason_share * shared(candidate.step_reason_tokens - own)
        # A step whose quoted condition the error says is about this incident: it fits, and
        # its place in the runbook (a prior for when nothing tells the steps apart) is moot.
        quoted = quotes_incident(candidate.evidence.remediation[candidate.position], shown)
        place = 0 if quoted else candidate.position
        points = points_at(candidate.action, pointed)
        candidate.parts = {
            "runbook": WEIGHTS.runbook * (1.0 - gap(candidate)),
            "position": -WEIGHTS.position_penalty * place,
            "overlap": WEIGHTS.overlap * math.log1p(overlap / WEIGHTS.overlap_scale),
            "setting": _setting_score(candidate.applies, incident, named),
            "fact": _fact_score(candidate, incident, quoted, points),
        }
        candidate.score = sum(candidate.parts.values())
        candidate.preference = _setting_bet(candidate.applies, incident)
    # A stable sort keeps the first of equal scores: the better runbook, the earlier step,
    # and a runbook step before the message's advice.
    ranked = [*candidates, *([advice] if advice else [])]
    return sorted(ranked, key=lambda c: -(c.score + c.preference))


@dataclass
class CandidateAudit:
    """Validation of every step the offline provider could choose from, before filtering:
    the figure that shows what the final pass rate would be without the filter."""

    steps: int = 0
    valid: int = 0
    premise_contradicted: int = 0
    unfilled_placeholder: int = 0
    #: (runbook slug, 1-based step, action, complaints) of each step that failed.
    rejected: list[tuple[str, int, str, list[str]]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "valid": self.valid,
            "premise_contradicted": self.premise_contradicted,
            "unfilled_placeholder": self.unfilled_placeholder,
            "rejected": [list(item) for item in self.rejected],
        }


def audit_candidates(ctx: AnalysisContext) -> CandidateAudit:
    """Each step of the candidate runbooks composed as the provider first words it (values
    filled, asides kept, no premise skipped) and validated."""
    audit = CandidateAudit()
    premises = read_premises(ctx)
    values = incident_values(ctx)
    for item in _candidate_runbooks(ctx):
        for position, step in enumerate(item.remediation, 1):
            composed = compose(item, *split_step(fill_values(step, values)), ctx)
            draft = Draft(*composed, runbook=item.slug, confidence=0.0, provider="", model="")
            check = validate(draft, ctx, premises)
            audit.steps += 1
            audit.valid += check.ok
            audit.premise_contradicted += not check.premises_ok
            audit.unfilled_placeholder += not check.placeholders_ok
            if not check.ok:
                audit.rejected.append((item.slug, position, draft.action, check.complaints))
    return audit
