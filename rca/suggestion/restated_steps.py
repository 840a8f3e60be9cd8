"""Which runbook steps a suggestion restates or says, and what it leaves to them.

A suggestion restates a step of its cited runbook when it holds most of the words of the
step's action and most of those of its main clause, the verb and its object before a
subordinate word ("before", "when", "so", ...): a step is matched by what it does, not by a
shared "before `load_state_dict`" (:func:`restated`). "Strip the `module.` prefix from the
checkpoint keys before calling `load_state_dict`" holds most words of "Unwrap nested
checkpoints before `load_state_dict`", but only "checkpoints" of what that step does. It says
a step of any runbook given to its author when it holds all the words of one of the step's
``says`` phrases outside the clauses it turns down (:func:`said_steps`). The premise checks
(:mod:`.premises`) then hold the suggestion to that step's premise. A suggestion is judged by
what it says itself: the options it sets, the module names it tells the user to use, what it
makes of a tensor, the key prefix it strips or adds, the driver version it names and the way
it moves a limited setting are its own, whatever step it shares words with, and the step's
text stands in for each kind only when it says nothing of it (:func:`own_kinds`). "Don't use
`query_key_value`; set `target_modules` to `q_proj`, `v_proj`" shares most words with a step
that names `query_key_value`, yet names the split projections, not the fused one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from ingest.linear_regex import compile as linear
from rca.corpus.step_metadata import StepMetadata
from rca.suggestion.driver_targets import driver_targets
from rca.suggestion.incident_facts import terms
from rca.suggestion.incident_setting import setting_of
from rca.suggestion.key_prefix_sides import moves_a_prefix, prefix_moves
from rca.suggestion.module_names import ShownModules, module_names_to_use
from rca.suggestion.negated_clauses import said_parts
from rca.suggestion.step_options import options_set_by, runs_script, without_asides
from rca.suggestion.step_tensors import tensor_targets
from rca.suggestion.step_values import fill_values, incident_values, step_wordings

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = [
    "MAX_SCAN",
    "RESTATES_MAIN_SHARE",
    "RESTATES_SHARE",
    "OwnKinds",
    "code_words",
    "main_clause",
    "own_kinds",
    "restated",
    "restated_step",
    "said_steps",
    "step_action",
]

RESTATES_SHARE = 0.6
"""A suggestion restates a step when its action holds at least this share of the words of
the step's action (asides dropped): the offline composer copies them all, an LLM that
rephrases keeps the option and API names. Not tuned on cases."""

RESTATES_MAIN_SHARE = 0.5
"""...and at least this share of the words of the step's main clause (its verb and object):
"Remove the prefix" restates "Strip the prefix", a suggestion that shares only the object
or only the trailing "before loading" does not. Not tuned on cases."""

MAX_SCAN = 4000
#: Where a step's main clause ends: a word opening a subordinate or following clause, or a
#: clause break ("Unwrap nested checkpoints | before `load_state_dict`").
_CLAUSE_END = linear(
    r"\b(?:before|after|when|whenever|while|so|because|since|if|unless|until|once|instead"
    r"|rather|then)\b|[;:,]",
    ignore_case=True,
)
_BOLD = linear(r"\*\*(?P<action>.+?)\*\*", dotall=True)
#: A word as code writes it (a dotted name counts as one); at most :data:`_MAX_WORDS` read.
_WORD = linear(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_MAX_WORDS = 400


class _Answer(Protocol):
    action: str
    reason: str
    runbook: str


@dataclass(frozen=True)
class OwnKinds:
    """What a suggestion says itself, so the step it restates does not speak for it."""

    options: bool  # it sets options or runs a script
    modules: bool  # it names modules to use
    tensors: bool = False  # it moves, casts or reshapes a tensor
    prefixes: bool = False  # it strips or adds a key prefix
    drivers: bool = False  # it names a driver version to move to


def own_kinds(answer: str | None, shown: ShownModules | None = None) -> OwnKinds:
    """What ``answer`` says itself: whether it sets options (or runs a script), names modules
    to use (names of modules, as ``shown`` and the attention families tell them, not
    ``LoraConfig`` or ``get_peft_model``), gives a tensor a device, dtype or shape, strips or
    adds a key prefix, and names a driver version. (Which limits it moves depends on the
    incident's: :func:`.limit_moves.moved_limits`.) No answer (``None``) says nothing."""
    text = (answer or "")[:MAX_SCAN]
    options = runs_script(text) or any(o.how in ("set", "change") for o in options_set_by(text))
    modules = bool(module_names_to_use(text, shown or ShownModules()))
    tensors = bool(tensor_targets(text))
    drivers = bool(driver_targets(text))
    return OwnKinds(options, modules, tensors, moves_a_prefix(text), drivers)


def step_action(step: str) -> str:
    """A step's bold action (or its text before the reason), asides dropped."""
    match = _BOLD.search(step)
    text = match.group("action") if match else step.partition(" Reason:")[0]
    return without_asides(text)


def main_clause(action: str) -> str:
    """A step action's main clause: its text before the first subordinate word or break."""
    match = _CLAUSE_END.search(action)
    return action[: match.start()] if match and match.start() else action


def restated(draft: _Answer, ctx: AnalysisContext) -> tuple[StepMetadata, str] | None:
    """The metadata and the wording (values filled) of the step that the draft restates."""
    text = (draft.action or "")[:MAX_SCAN]
    action, code = set(terms(text)), code_words(text)
    values = incident_values(ctx)  # a step naming {package} is restated with its value
    frameworks = setting_of(ctx).frameworks  # as fill_values chooses a step's wording
    best: tuple[tuple[float, int], StepMetadata, str] | None = None
    for item in ctx.evidence:
        if item.kind != "runbook" or item.slug != (draft.runbook or "").strip():
            continue
        for position, step in enumerate(item.remediation):
            wordings = [(names, fill_values(w, values)) for names, w in step_wordings(step)]
            covers = [_cover(filled, action) for _, filled in wordings]
            cover = max((c for c in covers if c is not None), default=None)
            if cover is None or (best is not None and cover <= best[0]):
                continue
            names, filled = _wording_said(wordings, code, frameworks)
            meta = item.step_metadata(position)
            best = (cover, replace(meta, api=names or meta.api, variants=()), filled)
    return (best[1], best[2]) if best else None


def _cover(filled: str, action: set[str]) -> tuple[float, int] | None:
    """How much of a step wording's action ``action`` holds (share, count); None when it
    does not restate it (too few of its words, or not its main clause)."""
    words = set(terms(step_action(filled)))
    if not words:
        return None
    share = len(words & action) / len(words)
    if share < RESTATES_SHARE or not _does(step_action(filled), action):
        return None
    return share, len(words & action)


def _wording_said(
    wordings: list[tuple[tuple[str, ...], str]], code: set[str], frameworks: frozenset[str]
) -> tuple[tuple[str, ...], str]:
    """Which wording of a restated step the answer gives: the one whose code names (API
    calls, classes, options) it says most, else the incident's framework's (the first
    variant for one of them, else the step's own: :func:`.step_values.choose_variant`).

    Each wording is its own premise: "Train in mixed precision (`torch.autocast`)" for a
    TensorFlow incident restates the PyTorch wording even when the step has a TensorFlow
    variant. Plain words shared with another framework's variant ("compute the loss from
    logits") say no API, so "... with BCEWithLogitsLoss on logits" is not read as the
    variant worded with ``from_logits=True``."""
    own = next((i for i, (names, _) in enumerate(wordings) if frameworks & set(names)), 0)
    said = [len(code & code_words(filled)) for _, filled in wordings]
    chosen = max(range(len(wordings)), key=lambda i: (said[i], i == own))
    return wordings[chosen]


def code_words(text: str) -> set[str]:
    """The words of ``text`` written as code, not English, lower-cased: with ``_`` inside
    (``from_logits``), a capital after a small letter (``BCEWithLogitsLoss``), or a dotted
    name with each of its parts (``nn.BCEWithLogitsLoss`` also says ``nn`` and
    ``bcewithlogitsloss``, as a step writing ``torch.nn.BCEWithLogitsLoss`` does; "e.g." is
    no name): the names that say which API an answer or a step is in."""
    found: set[str] = set()
    for _, match in zip(range(_MAX_WORDS), _WORD.finditer(text[:MAX_SCAN]), strict=False):
        word = match.group(0).strip("_")
        parts = [part for part in word.split(".") if len(part) > 1]
        if "." in word and parts:
            found |= {word.lower(), *(part.lower() for part in parts)}
        elif "_" in word or _camel(word):
            found.add(word.lower())
    return found


def _camel(word: str) -> bool:
    """Whether a capital follows a small letter in ``word`` (``BCEWithLogitsLoss``)."""
    return any(a.islower() and b.isupper() for a, b in zip(word, word[1:], strict=False))


def _does(action: str, said: set[str]) -> bool:
    """Whether ``said`` holds most of the main clause of a step's ``action``."""
    main = set(terms(main_clause(action)))
    return not main or len(main & said) / len(main) >= RESTATES_MAIN_SHARE


def restated_step(draft: _Answer, ctx: AnalysisContext) -> StepMetadata | None:
    """The metadata of the step of the cited runbook that the draft's action restates, if any
    (the best-covered one; of two covered alike, the one with more of its words said: a
    short step whose words all recur inside a longer one is not what the draft restates)."""
    found = restated(draft, ctx)
    return found[0] if found else None


def said_steps(draft: _Answer, ctx: AnalysisContext) -> list[tuple[StepMetadata, str]]:
    """The metadata and text of every step given to the draft's author (each runbook in the
    evidence) whose ``says`` words the draft's action holds, all of one phrase, outside the
    parts it turns down ("no need to update the driver", :mod:`.negated_clauses`); a key
    prefix it strips or adds in other words is said as "strip prefix" / "add prefix"."""
    text = (draft.action or "")[:MAX_SCAN]
    action = set(terms(" ; ".join(said_parts(text))))
    # A key prefix the action strips or adds its own way ("remove `module.` from the key
    # names", "k[7:]", a helper that strips it) is said in the words steps say it with.
    for verb, _ in prefix_moves(text):
        action |= {"add" if verb == "add" else "strip", "prefix"}
    found: list[tuple[StepMetadata, str]] = []
    for item in ctx.evidence:
        if item.kind != "runbook":
            continue
        for position in range(len(item.remediation)):
            meta = item.step_metadata(position)
            if any(set(words) <= action for words in map(terms, meta.says) if words):
                found.append((meta, item.remediation[position]))
    return found
