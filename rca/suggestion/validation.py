"""Pure checks that decide whether a suggestion can be trusted, and what to tell its author.

Every suggestion is stored with this record, so a user can see why it is (or is not)
trustworthy; the complaints are phrased for the LLM, which is re-asked with them. Beyond
format and grounding it checks harm: a suggestion whose premise the incident contradicts
(:mod:`rca.suggestion.premises`), that changes a layer's input width when the shapes say
the input is wrong (:mod:`rca.suggestion.checks.layer_resize`), that re-points a file's path
when the loader found the file and rejected its contents
(:mod:`rca.suggestion.checks.file_location`), that adds a batch axis the input already has
(:mod:`~rca.suggestion.checks.leading_axis`), reuses EOS as pad when that stops generation
from ending (:mod:`~rca.suggestion.checks.pad_eos`), casts to int64 when int64 is refused
(:mod:`~rca.suggestion.checks.int64_cast`), raises shared memory for a bus error the message
does not show (:mod:`~rca.suggestion.checks.bus_error`), sets a value the documentation says
cannot get past the failure shown (:mod:`~rca.suggestion.checks.unfit_values`), is written in
another framework's API than the incident's (:mod:`~rca.suggestion.checks.foreign_api`) or that
carries an unfilled template fails, whoever wrote it; the pipeline then stores it marked
invalid rather than as a trusted fix. The heuristics lean lenient on what counts as a code
location or a dimension: a false alarm costs a re-ask and maybe the offline fallback, while
what we want to catch is a fabricated file:line or tensor size. The measurements themselves live in
:mod:`rca.suggestion.checks`; this module combines them into the record and re-exports them
for its importers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rca.corpus.sentences import first_sentence_end
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.checks.added_axis import added_axis_violations
from rca.suggestion.checks.bus_error import bus_error_violations
from rca.suggestion.checks.code_locations import (
    code_locations,
    stack_path_match,
    unmatched_locations,
)
from rca.suggestion.checks.conv_layout import channels_last_violations
from rca.suggestion.checks.dimensions import (
    diff_dims,
    named_dims,
    shape_incompatibility,
    unknown_dim_share,
    unknown_dims,
)
from rca.suggestion.checks.file_location import location_violations
from rca.suggestion.checks.foreign_api import foreign_api_violations
from rca.suggestion.checks.int64_cast import int64_violations
from rca.suggestion.checks.layer_resize import resize_violations
from rca.suggestion.checks.leading_axis import leading_axis_violations
from rca.suggestion.checks.pad_eos import pad_eos_violations
from rca.suggestion.checks.placeholders import template_remnants
from rca.suggestion.checks.stated_numbers import incident_numbers
from rca.suggestion.checks.stem_replace import stem_replace_violations
from rca.suggestion.checks.unfit_values import unfit_value_violations
from rca.suggestion.checks.urls import unsourced_urls, urls_in
from rca.suggestion.imperative_verbs import (
    IMPERATIVE_VERBS,
    past_lead_clauses,
    verb_before_object,
    without_asides,
)
from rca.suggestion.incident_setting import log_texts
from rca.suggestion.layer_width import derived_dims
from rca.suggestion.negated_clauses import said_parts
from rca.suggestion.premises import Premises, premise_complaints, read_premises
from rca.suggestion.reinstalled_release import reinstalled_release_violations
from rca.suggestion.removed_libraries import removal_violations
from rca.suggestion.shell_commands import opens_command

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = [
    "IMPERATIVE_VERBS",
    "MAX_ACTION_CHARS",
    "MAX_REASON_CHARS",
    "MAX_SCAN_CHARS",
    "MAX_UNKNOWN_DIM_SHARE",
    "MIN_STACK_PATH_MATCH",
    "Validation",
    "code_locations",
    "format_ok",
    "grounded",
    "named_dims",
    "shape_incompatibility",
    "stack_path_match",
    "unknown_dim_share",
    "unsourced_urls",
    "urls_in",
    "validate",
]

MAX_ACTION_CHARS = 200
MAX_REASON_CHARS = 400
MIN_STACK_PATH_MATCH = 0.92
MAX_UNKNOWN_DIM_SHARE = 0.3

#: A negative imperative opening an action ("Do not set X again; make ..."): its first said
#: part (:func:`.negated_clauses.said_parts`) must open with a verb instead.
_NEGATIVE = frozenset({"do", "don't", "don’t", "never"})
_JOINING = frozenset({"but", "and", "instead", "then", "so", "just", "rather"})

# --------------------------------------------------------------------------- format


def format_ok(action: Any, reason: Any) -> tuple[bool, str]:
    """Tell whether the answer has the shape users expect: "<Verb> <object>." plus a reason.

    The verb is read where the instruction starts: past a lead clause ("If the image was
    loaded as (256, 256, 3), permute it ...", "Instead of the default 32768, pass ...") and,
    after a negative imperative, in the first part it says outside brackets ("Don't use
    strict=False (it would ...); strip ...").

    Returns ``(ok, problem)``; ``problem`` is empty when ``ok``.
    """
    if not isinstance(action, str) or not action.strip():
        return False, "action is missing: give one imperative sentence"
    if not isinstance(reason, str) or not reason.strip():
        return False, "reason is missing: give the technical basis in one or two sentences"
    action, reason = action.strip(), reason.strip()
    if len(action) > MAX_ACTION_CHARS:
        return False, f"action is {len(action)} characters; keep it within {MAX_ACTION_CHARS}"
    if len(reason) > MAX_REASON_CHARS:
        return False, f"reason is {len(reason)} characters; keep it within {MAX_REASON_CHARS}"
    instruction = past_lead_clauses(action)
    head, _, rest = instruction.lstrip("`*_\"' ").partition(" ")
    first = head.strip(",.:;`*_\"'").lower()
    if first in _NEGATIVE and (said := said_parts(without_asides(instruction))):
        words = said[0].lstrip("`*_\"' ").split(" ", 2)
        if len(words) > 1 and words[0].lower() in _JOINING:  # "..., but keep it int32"
            words = words[1:]
        head, rest = words[0], " ".join(words[1:])
        first = head.strip(",.:;`*_\"'").lower()
    if (
        first not in IMPERATIVE_VERBS
        and not opens_command([head, *rest.split()])
        and not verb_before_object(first, rest)
    ):
        return False, f"action must start with an imperative verb (like Set, Reduce), not {first!r}"
    if not re.search(r"[A-Za-z0-9`]", rest):
        return False, "action needs an object: say what to act on"
    single = action.rstrip(".!? ")
    if first_sentence_end(single) < len(single):
        return False, "action must be a single sentence; put the explanation in reason"
    return True, ""


def grounded(slug: Any, allowed_slugs: Iterable[str]) -> bool:
    """The cited runbook was one of those given to the provider (no invented citations)."""
    return isinstance(slug, str) and bool(slug.strip()) and slug.strip() in set(allowed_slugs)


def _cited_runbook_texts(slug: Any, ctx: AnalysisContext) -> list[str]:
    """What the cited runbook showed the provider: its chunks and remediation steps.

    Past-fix evidence contributes its runbook's steps but not its text, which an LLM wrote.
    """
    texts: list[str] = []
    for item in ctx.evidence:
        if not isinstance(slug, str) or item.slug != slug.strip():
            continue
        texts.extend(item.remediation)
        if item.kind == "runbook":
            texts.append(item.text)
    return texts


# --------------------------------------------------------------------------- the record


class Answer(Protocol):
    action: str
    reason: str
    runbook: str


@dataclass
class Validation:
    """The validation record stored with every suggestion and shown in the UI and API."""

    format_ok: bool
    grounded: bool
    stack_path_match: float
    shape_incompatibility: float
    unknown_dim_share: float
    ok: bool
    complaints: list[str] = field(default_factory=list)
    #: No URL in action or reason that the cited runbook does not contain.
    urls_grounded: bool = True
    #: The incident contradicts no premise of what is suggested (a step's ``unless``,
    #: ``sets``, ``api``; an option the message says is already set).
    premises_ok: bool = True
    #: No unfilled template ("{actual-size}", "the K1 in the message") in action or reason.
    placeholders_ok: bool = True

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def validate(draft: Answer, ctx: AnalysisContext, premises: Premises | None = None) -> Validation:
    """Check a draft against the context it was written from; complaints say how to fix it.

    ``premises`` (read from ``ctx`` when not given) lets a caller that validates many
    drafts of one incident read them once.
    """
    complaints: list[str] = []
    is_formatted, problem = format_ok(draft.action, draft.reason)
    if not is_formatted:
        complaints.append(problem)
    allowed = ctx.allowed_slugs
    is_grounded = grounded(draft.runbook, allowed)
    if not is_grounded:
        complaints.append(
            f"cite exactly one runbook slug from this list: {', '.join(allowed) or '(none)'};"
            f" {draft.runbook!r} is not one of them"
        )
    text = f"{draft.action or ''}\n{draft.reason or ''}"
    sources = _cited_runbook_texts(draft.runbook, ctx)
    named, missing = unmatched_locations(text, ctx.frames, sources)
    path_match = round((len(named) - len(missing)) / len(named), 4) if named else 1.0
    if path_match < MIN_STACK_PATH_MATCH:
        complaints.append(
            "name code locations only as they appear in the stack frames; not in the frames: "
            + ", ".join(missing)
        )
    foreign = unsourced_urls(text, sources)
    if foreign:
        complaints.append(
            "give no URL that the cited runbook does not contain; remove: " + ", ".join(foreign)
        )
    derived = derived_dims(ctx.shape_diff or [])
    stated = incident_numbers(ctx.message or "", ctx.logs)
    unknown_share = unknown_dim_share(text, ctx.shape_diff, derived, stated)
    if unknown_share > MAX_UNKNOWN_DIM_SHARE:
        unknown = sorted(unknown_dims(text, ctx.shape_diff, derived, stated))
        also = f" or derived from it ({', '.join(map(str, sorted(derived)))})" if derived else ""
        complaints.append(
            "name tensor dimensions only from the shape diff "
            f"({', '.join(map(str, sorted(diff_dims(ctx.shape_diff))))}){also}; not in it: "
            + ", ".join(map(str, unknown))
        )
    remnants = template_remnants(text)
    if remnants:
        complaints.append("fill in or remove the template placeholders: " + ", ".join(remnants[:3]))
    premises = premises or read_premises(ctx)
    contradicted = premise_complaints(draft, ctx, premises)
    contradicted += resize_violations(draft.action or "", premises.facts, ctx.shape_diff)
    contradicted += added_axis_violations(draft.action or "", premises.facts)
    contradicted += location_violations(draft.action or "", premises.facts)
    contradicted += leading_axis_violations(draft.action or "", premises.facts)
    contradicted += channels_last_violations(draft.action or "", ctx.message or "")
    contradicted += pad_eos_violations(draft.action or "", premises.facts)
    contradicted += int64_violations(draft.action or "", premises.facts)
    contradicted += bus_error_violations(draft.action or "", draft.reason or "", premises.facts)
    contradicted += removal_violations(draft.action or "", premises.facts)
    contradicted += stem_replace_violations(draft.action or "", premises.facts)
    contradicted += reinstalled_release_violations(
        draft.action or "", ctx.message or "", log_texts(ctx.logs)
    )
    contradicted += unfit_value_violations(
        draft.action or "", [ctx.message or "", *log_texts(ctx.logs)], premises.facts
    )
    contradicted += foreign_api_violations(draft.action or "", premises.frameworks)
    complaints.extend(contradicted)
    return Validation(
        format_ok=is_formatted,
        grounded=is_grounded,
        stack_path_match=path_match,
        shape_incompatibility=shape_incompatibility(ctx.shape_diff),
        unknown_dim_share=unknown_share,
        ok=not complaints,
        complaints=complaints,
        urls_grounded=not foreign,
        premises_ok=not contradicted,
        placeholders_ok=not remnants,
    )
