"""The options the error message itself points at, and whether a step's code names one.

A framework that knows its own failure often prints the knob that fixes it: transformers'
size-mismatch error ends "You may consider adding `ignore_mismatched_sizes=True` in the model
`from_pretrained` method" (``modeling_utils.py``), vLLM's OOM says "Try increasing
`gpu_memory_utilization`", and a message that reports a setting ("the worker process sets
CUDA_VISIBLE_DEVICES=1") names the variable the fault lives in. A runbook step whose code names
that option is the message's own remedy in the runbook's words, with the runbook's conditions:
it fits the incident as a shown figure does (:attr:`OfflineWeights.fact`), over a step the
runbook lists first that names another. Only compound names count (``snake_case``,
``UPPER_CASE``, ``--kebab-case``: :func:`option_like`): a plain word a message uses ("name",
"device") would match steps by chance.

A step that names the option only to limit it ("Use `retain_graph=True` only when two backward
passes are intended") is the runbook's caution about that advice, not the remedy: it gets
nothing (:func:`points_at`).

Read from the message and the error-level log lines: the options each concrete advice clause
(:func:`rca.suggestion.message_advice.read_advice`) changes (every one it names but a place
after a preposition: "in the model `from_pretrained` method", :func:`_placed`), and
the environment variables the message's prose or commands show set
(:func:`rca.suggestion.shown_options.read_shown_options`, the message only). A message prints
the process environment when its value is the point ("the worker process sets
CUDA_VISIBLE_DEVICES=1"); a keyword's value it prints is mostly one side of a comparison ("ds
gradient_accumulation_steps=8 vs hf gradient_accumulation_steps=8"), and a log's config dump
names options nobody said were at fault. Linear time: RE2 patterns over bounded spans.
"""

from __future__ import annotations

from collections.abc import Mapping

from ingest.linear_regex import compile as linear
from rca.suggestion.code_span_options import option_like, span_options, value_of
from rca.suggestion.context import AnalysisContext
from rca.suggestion.message_advice import error_log_texts, read_advice
from rca.suggestion.shown_options import read_shown_options
from rca.suggestion.step_options import option_key

__all__ = ["code_option_names", "message_option_names", "points_at"]

_SPAN = linear(r"`([^`\n]{1,400})`")
_NAME = linear(r"-{0,2}[A-Za-z_][A-Za-z0-9_.-]*")
_MAX_SPANS = 40
_PLACE = linear(r"\b(?:in|into|to|on|of|from|via|for|inside|within)\s+(?:\S+\s+){0,2}`?$")
_ONLY = linear(r"\bonly\s+(?:when|if|for|after|in\s+case)\b", ignore_case=True)


def _names(code: str) -> set[str]:
    """The compound names a piece of code holds, as :func:`option_key` compares them."""
    return {
        option_key(match.group(0))
        for match in _NAME.finditer(code)
        if option_like(match.group(0).lstrip("-").replace("-", "_"))
    }


def code_option_names(text: str) -> frozenset[str]:
    """The compound names the code spans of ``text`` (a step's action) hold."""
    found: set[str] = set()
    for match in list(_SPAN.finditer(text))[:_MAX_SPANS]:
        found |= _names(match.group(1))
    return frozenset(name for name in found if name)


def points_at(action: str, pointed: Mapping[str, str | None]) -> bool:
    """Whether a step's ``action`` names one of the ``pointed`` options as its remedy: its code
    names one, gives it no other value than the advice does (``local_files_only=True`` is not
    the advised ``local_files_only=False``), and does not restrict it to a condition ("only
    when", "only if")."""
    named = [name for name in code_option_names(action) if name in pointed]
    if not named or _ONLY.search(action) is not None:
        return False
    spans = [m.group(1) for m in list(_SPAN.finditer(action))[:_MAX_SPANS]]
    given = {option_key(n): value_of(v) for code in spans for n, v in span_options(code)}
    return any(_agrees(given.get(name), pointed[name]) for name in named)


def _agrees(given: str | None, advised: str | None) -> bool:
    """Whether a step's value for an option is the advised one (either unsaid agrees)."""
    if not given or not advised:
        return True
    return given.strip("'\"`").lower() == advised.strip("'\"`").lower()


def _placed(text: str, option: str) -> bool:
    """Whether ``option`` is where the advice applies, not what it changes: it follows a
    preposition ("in the model `from_pretrained` method", "to `DistributedDataParallel`")."""
    at = text.find(option)
    return at > 0 and _PLACE.search(text[max(at - 40, 0) : at]) is not None


def message_option_names(ctx: AnalysisContext) -> dict[str, str | None]:
    """The options the message's advice names or its prose shows set (see the module), each
    with the value the advice gives it (None when it gives none, or only reports it)."""
    message = ctx.message or ""
    found: dict[str, str | None] = {}
    for advice in read_advice(message, error_log_texts(ctx.logs)):
        if advice.concrete:
            for option in advice.options:
                if not _placed(advice.text, option):
                    name, _, value = option.partition("=")
                    for key in _names(name):
                        found.setdefault(key, value_of(value) or None)
    for name, _value in read_shown_options(message).options.values():
        if name.isupper():  # an environment variable the message reports (see the module)
            for key in _names(name):
                found.setdefault(key, None)
    return {name: value for name, value in found.items() if name}
