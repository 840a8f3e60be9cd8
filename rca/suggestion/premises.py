"""Whether an incident contradicts a step's premise, and whether a suggestion restates one.

A runbook step's premises are its ``unless``, ``sets`` and ``api`` conditions
(:mod:`rca.corpus.step_metadata`). They are checked against what the incident itself shows
(:mod:`.incident_facts`, :mod:`.incident_setting`); an unknown contradicts nothing. The same
checks run on every suggestion, offline or from an LLM, in :func:`premise_complaints`:

- the suggestion restates a step of its cited runbook (most of the step's own action words,
  :mod:`.restated_steps`) whose premise the incident contradicts; the options it sets, the
  module names, tensor targets, key prefix moves, driver versions and limit moves it gives are
  its own, the step's text standing in only for a kind it says nothing of;
- the suggestion says what a step's ``says`` words name (stripping a key prefix, saving the
  unwrapped model), in any wording and citing any runbook, and the incident contradicts that
  step's premise;
- the suggestion sets, turns on or adds an option (or runs a script) that the incident
  already shows set that way: in its message, log lines, launch command, config lines,
  failing code or inference context (:mod:`.shown_options`). Which options a step or a
  suggestion sets is read from its own words (:mod:`.step_options`) and from its ``sets``
  metadata, so users' runbooks get the premise without metadata. A list counts as one value
  (``providers=[...]``, ``CUDA_VISIBLE_DEVICES=0,1``), and a step that adds values to a
  list ("add `CUDAExecutionProvider` to `providers`") repeats it when the shown list holds
  them all. The option a step names
  first is its change; later ones are aliases, alternatives or additions, so only the first
  (or one its ``sets`` metadata names) repeating what the incident shows contradicts it;
- the suggestion moves, casts or reshapes a tensor to what the incident shows it already is
  (the input already on ``cuda``, already ``float32``, a batch axis where none is missing:
  :mod:`.shown_tensors`, :mod:`.step_tensors`);
- the suggestion moves a package towards a release the message or logs name as the cause
  ("removed in JAX v0.4.34", "requires protobuf<4", "PyTorch >= 2.1 is required"):
  :mod:`.cause_releases`;
- the suggestion moves a setting that is not a package past a limit the message names, or
  uses a value it rules out ("max supported IR version: 9", "unsupported pickle protocol: 5",
  bfloat16 below the compute capability it needs): :mod:`.named_limits`; or moves a token
  count, batch or file size past the bound the message states (:mod:`.size_moves`);
- the suggestion strips a key prefix the checkpoint's keys shown already lack (or both sides
  carry), adds one they already carry, or loads non-strictly when every key shown differs by a
  prefix (:mod:`.prefix_shift`): :mod:`.key_prefix_sides`;
- its target is what the message shows failing (a shape, object, release): :mod:`.shown_failures`;
- the suggestion resizes a layer or skips mismatched sizes when the mismatched tensors are
  empty (partitioned weights saved without gathering): :mod:`.empty_tensors`;
- a step's wording (values filled), or a suggestion restating it or saying its ``says``
  words, makes a step-relative fact of its ``unless`` hold (it moves the driver older than the
  one installed, or names a module the model lacks): :mod:`.step_relative`.

Any of these fails validation: the LLM is re-asked with the complaint, and a suggestion that still
fails is stored marked invalid, never shown as a trusted fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from ingest.linear_regex import compile as linear
from rca.corpus.step_metadata import FACTS, StepMetadata
from rca.suggestion.advised_ways import advised_ways, moves_against_advice
from rca.suggestion.api_drift import drift_facts, read_drift
from rca.suggestion.cause_releases import NamedCause, incident_causes, moves_towards
from rca.suggestion.empty_tensors import empty_tensor_facts, resize_violations
from rca.suggestion.incident_facts import incident_facts
from rca.suggestion.incident_setting import log_texts, setting_of
from rca.suggestion.key_prefix_sides import (
    ShownKeys,
    prefix_side_facts,
    prefix_violations,
    read_shown_keys,
)
from rca.suggestion.limit_moves import limit_violations, moved_limits
from rca.suggestion.named_limits import (
    NamedLimit,
    RuledOutValue,
    read_named_limits,
    read_ruled_out_values,
)
from rca.suggestion.option_aliases import canonical
from rca.suggestion.required_releases import with_required_causes
from rca.suggestion.restated_steps import (
    MAX_SCAN,
    RESTATES_SHARE,
    own_kinds,
    restated,
    restated_step,
    said_steps,
)
from rca.suggestion.shown_failures import failure_harms
from rca.suggestion.shown_options import list_items, read_shown_options
from rca.suggestion.shown_tensors import ShownTensor, read_shown_tensors
from rca.suggestion.shown_values import same_value
from rca.suggestion.size_limits import SizeBound, read_size_bounds
from rca.suggestion.size_moves import size_harms
from rca.suggestion.stated_needs import StatedNeeds, read_stated_needs
from rca.suggestion.step_options import (
    NOT_LITERAL,
    StepOption,
    option_key,
    options_set_by,
    runs_script,
    scripts_run_by,
)
from rca.suggestion.step_relative import StepRelative, read_step_relative, relative_facts
from rca.suggestion.step_tensors import repeated_tensor_targets
from rca.suggestion.step_values import step_wordings
from rca.suggestion.training_or_serving import mode_contradictions, run_facts

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = [
    "RESTATES_SHARE",
    "Premises",
    "contradictions",
    "option_contradictions",
    "premise_complaints",
    "read_premises",
    "restated_step",
    "said_steps",
    "shown_harms",
]

_BOLD = linear(r"\*\*(?P<action>.+?)\*\*", dotall=True)


@dataclass(frozen=True)
class Premises:
    """What an incident shows that a step's premise can contradict."""

    facts: frozenset[str]
    frameworks: frozenset[str]
    options_set: Mapping[str, str]  # option name as shown -> value ("" for a bare switch)
    #: Basenames of the scripts the incident shows failing (in-app frames) or launched.
    scripts: frozenset[str] = frozenset()
    #: Releases the message or logs name as the cause (:mod:`.cause_releases`): no suggestion
    #: moves a package towards one.
    causes: tuple[NamedCause, ...] = ()
    #: Each tensor role's device, dtype and shape as shown (:mod:`.shown_tensors`).
    tensors: Mapping[str, ShownTensor] = field(default_factory=dict)
    #: Settings the message bounds and values it rules out (:mod:`.named_limits`).
    limits: tuple[NamedLimit, ...] = ()
    ruled_out: tuple[RuledOutValue, ...] = ()
    #: The checkpoint's and the model's keys the incident lists (:mod:`.key_prefix_sides`).
    keys: ShownKeys = ShownKeys()
    #: The driver and module names a step's own words are held to (:mod:`.step_relative`).
    relative: StepRelative = StepRelative()
    #: The way the message advises moving an option (:mod:`.advised_ways`).
    advised: Mapping[str, str] = field(default_factory=dict)
    #: Token counts, batches and file sizes the message bounds (:mod:`.size_limits`).
    sizes: tuple[SizeBound, ...] = ()
    #: A CUDA build or a setting's value the message says the fix needs (:mod:`.stated_needs`).
    needs: StatedNeeds = StatedNeeds()

    def shown(self, key: str) -> tuple[str, str] | None:
        """The option (name as shown, value) the incident shows set under a normalised
        ``key``, also as the last part of a dotted name (``model.config.use_cache``) or under
        an alias (:mod:`.option_aliases`: ``ddp_find_unused_parameters``, or Lightning's
        ``strategy=ddp_find_unused_parameters_true``, named then by the option it sets)."""
        for name, value in self.options_set.items():
            shown, same = canonical(option_key(name), value)
            if shown == key or shown.endswith("." + key):
                return (name, value) if same == value else (shown, same or "")
        return None

    def as_lines(self) -> list[str]:
        """The premises in words, for the prompt and the UI."""
        lines = [f"{name}: {FACTS[name]}" for name in sorted(self.facts) if name in FACTS]
        if self.frameworks:
            lines.append("frameworks in the code: " + ", ".join(sorted(self.frameworks)))
        for option, value in sorted(self.options_set.items()):
            lines.append(f"already set: {option}" + (f"={value}" if value else ""))
        lines += [
            f"named cause: {cause.describe()}: never move it towards that" for cause in self.causes
        ]
        lines += [
            f"already so: the {role} is {tensor.describe()}: never move, cast or reshape it to that"
            for role, tensor in sorted(self.tensors.items())
            if tensor.describe()
        ] + self.relative.as_lines()
        lines += self.needs.as_lines()
        lines += [
            f"named limit: {limit.describe()}: never move it past that" for limit in self.limits
        ]
        lines += [f"ruled out: {ruled.why}: never use it" for ruled in self.ruled_out]
        lines += [f"size limit: {size.describe()}: never move it past that" for size in self.sizes]
        for side, keys in (("checkpoint", self.keys.checkpoint), ("model", self.keys.model)):
            if keys:
                lines.append(f"the {side}'s keys shown start like: {keys[0]}")
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
    logs = log_texts(ctx.logs)
    facts = incident_facts(message, list(ctx.shape_diff), _code_texts(ctx), ctx.frames, logs)
    facts |= drift_facts(read_drift(message, ctx.frames, log_texts(ctx.logs))) | run_facts(ctx)
    shown = read_shown_options(message, log_texts(ctx.logs), ctx.frames, ctx.inference_context)
    options = dict(shown.options.values())
    for name, value in setting.options_set.items():
        if option_key(name) not in shown.options:
            options[name] = value
    causes = incident_causes(message, _code_texts(ctx))  # the texts the version facts read
    causes = with_required_causes(causes, message, _code_texts(ctx))  # and what they require
    tensors = read_shown_tensors(message, logs, ctx.shape_diff, ctx.inference_context)
    texts = [message, *logs]
    facts |= empty_tensor_facts(message, list(ctx.shape_diff)) | prefix_side_facts(message)
    return Premises(
        facts,
        setting.frameworks,
        options,
        shown.scripts,
        causes,
        tensors,
        read_named_limits(texts),
        read_ruled_out_values(texts),
        read_shown_keys(texts),
        read_step_relative(texts, _code_texts(ctx), ctx.frames),
        advised_ways(texts),
        read_size_bounds(
            texts, ctx.shape_diff, ctx.frames, [e.failure_class for e in ctx.evidence[:1]]
        ),
        read_stated_needs(texts),
    )


def _repeats(option: StepOption, premises: Premises) -> str | None:
    """How the incident already shows the option as the step would set it, or None."""
    shown = premises.shown(option.key)
    if shown is None or option.how not in ("set", "change") or option.value == NOT_LITERAL:
        return None
    if option.adds:  # "add V to O": done when O's shown list holds every V
        repeated = set(option.adds) <= set(list_items(shown[1]))
    elif option.value is None:  # "set X" with no value: any value shown is set already
        repeated = option.how != "change"
    else:
        repeated = same_value(shown[1], option.value)
    if not repeated:
        return None
    return f"{shown[0]}={shown[1]}" if shown[1] else shown[0]


def _tensor_repeats(action: str, premises: Premises) -> list[str]:
    """What ``action`` makes of a tensor that the incident shows already done."""
    tensors = repeated_tensor_targets(action, premises.tensors)
    return [f"the incident shows {why}" for why in tensors]


def option_contradictions(
    action: str,
    premises: Premises,
    declared: tuple[str, ...] = (),
    tensors: bool = True,
    left: frozenset[str] = frozenset(),
) -> list[str]:
    """Why the incident contradicts what ``action`` sets: its first option (or one of the
    ``declared`` ``sets`` names) is already shown at that value, or the script it runs is
    the one the incident shows failing, with every flag it passes already passed; with
    ``tensors``, also a tensor it moves or casts to what the incident shows it already is.
    Options keyed in ``left`` are ones the answer keeps or refuses: not set by the step it
    restates either."""
    reasons: list[str] = []
    command = runs_script(action)  # then only the script command's flags are its change
    named = [o for o in options_set_by(action) if o.key not in left]
    options = [o for o in named if o.how in ("set", "change") and (o.in_command or not command)]
    declared_keys = {option_key(name) for name in declared} - left
    derived = {option.key for option in named}
    options += [StepOption(key, key, None, "set") for key in declared_keys - derived]
    for position, option in enumerate(options):
        if position and option.key not in declared_keys:
            continue
        if option.key in declared_keys:  # the runbook says the step sets it
            option = replace(option, how="set")
        if (shown := _repeats(option, premises)) is not None:
            reason = f"the incident shows {shown} is already set"
            if reason not in reasons:
                reasons.append(reason)
    for script, flags in scripts_run_by(action):
        if script in premises.scripts and all(premises.shown(flag) for flag in flags):
            reasons.append(f"the incident shows {script} is the script that fails")
    return reasons + (_tensor_repeats(action, premises) if tensors else [])


def shown_harms(action: str, premises: Premises, answer: str | None = None) -> list[str]:
    """Why what the incident shows makes ``action`` go the wrong way or repeat what is done:
    a limit or a ruled-out value the message names, the side a key prefix is on, tensors
    that are empty, a module PEFT says the model lacks (:mod:`.named_limits`,
    :mod:`.key_prefix_sides`, :mod:`.empty_tensors`, :mod:`.step_relative`). ``answer`` is
    the action of a suggestion restating the step whose text ``action`` is: a limit it moves,
    a key prefix it strips or adds, a driver version and module names it gives are its own
    (judged on its own words), so the step's are read only for the kinds it says nothing of."""
    limits, prefixes, drivers, modules = premises.limits, True, True, True
    if answer is not None:
        own = own_kinds(answer, premises.relative.modules)
        moved = moved_limits(answer, premises.limits)
        limits = tuple(limit for limit in premises.limits if limit not in moved)
        prefixes, drivers, modules = not own.prefixes, not own.drivers, not own.modules
    return [
        *limit_violations(action, limits, premises.ruled_out),
        *prefix_violations(action, premises.keys, moves=prefixes),
        *resize_violations(action, premises.facts),
        *premises.relative.harms(action, drivers=drivers, modules=modules),
        *moves_against_advice(action, premises.advised),
        *premises.needs.harms(action),
        *(size_harms(action, premises.sizes, premises.advised) if answer is None else []),
    ]


def _step_actions(step: str) -> list[str]:
    """The action of each wording of a step, asides kept (they name its options)."""
    actions = []
    for _, wording in step_wordings(step):
        match = _BOLD.search(wording)
        actions.append(match.group("action") if match else wording.partition(" Reason:")[0])
    return actions


def contradictions(
    meta: StepMetadata, premises: Premises, step: str = "", wording: str = "", said: str = ""
) -> list[str]:
    """Why the incident contradicts this step's premise, one phrase per condition (empty:
    it does not). ``step`` is the text of a step a suggestion restates and ``wording`` the
    suggestion's action. A suggestion is judged by what it says (:func:`.own_kinds`): the
    options it sets itself are checked, with the step's ``sets``; only when it sets none are
    the step's own options read from ``step`` (with the values it gives them). Likewise what
    it makes of a tensor, the limits it moves, the key prefix it strips or adds and the
    module names it gives: the step's count only for a kind the suggestion says nothing of
    (:func:`shown_harms`). Step-relative facts of ``unless`` are read from ``step``,
    ``wording`` and ``said`` (:mod:`.step_relative`)."""
    own = own_kinds(wording if step else "", premises.relative.modules)
    relative = relative_facts(meta.unless, step, wording, premises.relative, premises.facts, said)
    reasons = [f"the incident shows {FACTS[f]}" for f in meta.unless if f in premises.facts]
    reasons += [f"{fact}: {why}" for fact, why in relative.items()]
    reasons += mode_contradictions(meta.mode, premises.facts)
    actions = _step_actions(step) if step else [""]
    # An option the answer names and keeps or refuses ("keep `X=True`", "do not set `X`
    # again") is its own: the step's setting of it does not stand in.
    left = frozenset(o.key for o in options_set_by(wording) if o.how not in ("set", "change"))
    for action in [wording] if own.options else actions:
        found = option_contradictions(action, premises, meta.sets, tensors=False, left=left)
        reasons += [reason for reason in found if reason not in reasons]
    for action in [wording] if own.tensors else actions:
        reasons += [reason for reason in _tensor_repeats(action, premises) if reason not in reasons]
    for action in actions:
        found = shown_harms(action, premises, answer=wording if step else None)
        reasons += [reason for reason in found if reason not in reasons]
    if set(meta.variants) & premises.frameworks:
        return reasons  # worded for the incident's framework by its variant (step_values)
    if meta.api and premises.frameworks and not set(meta.api) & premises.frameworks:
        reasons.append(
            f"the step is written for {', '.join(meta.api)} but the incident's code is "
            + ", ".join(sorted(premises.frameworks))
        )
    return reasons


def premise_complaints(draft: _Answer, ctx: AnalysisContext, premises: Premises) -> list[str]:
    """What in the draft the incident contradicts, phrased for its author."""
    action = (draft.action or "")[:MAX_SCAN]
    repeats = option_contradictions(action, premises)
    causes = moves_towards(action, premises.causes)
    harms = shown_harms(action, premises) + failure_harms(draft, ctx, premises.facts)
    complaints = [
        f"{reason}: do not suggest setting it again; find why the failure happens with it set"
        for reason in repeats
    ]
    complaints += [
        f"{reason}: move it away from the release the incident names as the cause"
        for reason in causes
    ]
    complaints += harms
    # A reason already given for the draft's own words is not given again for its step.
    given = {*repeats, *causes, *harms}
    step = restated(draft, ctx)
    found = contradictions(step[0], premises, step[1], action) if step else []
    for said, text in said_steps(draft, ctx):
        found += contradictions(said, premises, wording=action, said=text)
    reasons = [reason for reason in dict.fromkeys(found) if reason not in given]
    if reasons:
        complaints.append(
            "the suggested step does not apply to this incident: " + "; ".join(reasons)
        )
    return complaints
