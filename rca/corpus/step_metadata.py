"""When a remediation step applies: optional metadata written under the step in its runbook.

What we know about a failure lives in its runbook, not in the offline provider's code: a
step says whether it is a training or a serving fix, which frameworks it is written for,
which facts of an incident make it *the* fix, and which facts rule it out. One indented
line under the numbered step, a YAML flow mapping after ``Applies:``::

    2. **Add the missing batch axis (`x.unsqueeze(0)`).** Reason: layers take batches.
       Applies: {fits: [batch-axis-missing]}

Every key is optional, and so is the line: a runbook without it (the ones users bring)
works as before, its steps ranked by their runbook, their place and their words alone.

``mode``
    ``training`` or ``serving``: the step is a fix for that setting only.
``frameworks``
    Lowercase names as they appear in code and logs (``vllm``, ``keras``, ``tf``); the step
    is written for them, so it fits an incident that names one and not one that names only
    another framework.
``fits`` / ``unless``
    Names from :data:`FACTS` (kept in :mod:`rca.corpus.step_facts`): facts read from an
    incident's shapes, state_dict keys, memory figures and code. ``fits``: the step is the
    fix when the fact holds; ``unless``: the fact contradicts the step's premise.
``sets``
    Option or flag names the step turns on (``find_unused_parameters``). Its premise is
    that they are not on yet: an incident whose message says one is already set or
    enabled contradicts it.
``says``
    Words that make a suggestion this step however it is worded ("prefix",
    "model.module.state_dict"): a suggestion whose action holds every word of one of them
    (as :func:`rca.suggestion.incident_facts.terms`) is held to this step's premises, whichever
    runbook it cites, when the step's runbook was given to its author. A rephrased step
    keeps these words where it drops the rest.
``api``
    Frameworks whose API the step is written in (``pytorch``, ``tensorflow``, ``jax``).
    An incident whose frames, modules or error types show only other frameworks
    contradicts it (``torch.flatten`` is no fix for a Keras model).

A step may also carry **framework variants**: indented lines under it, each
``For <framework>[, <framework>]: **Action.** Reason: why.`` with names from
:data:`API_FRAMEWORKS`. A variant is the same fix in that framework's API; it keeps the
step's place and premises, with ``api`` set to its own frameworks. Which wording an incident
gets is chosen in :mod:`rca.suggestion.step_values` from the frameworks its code shows; the
step's metadata lists the variants' frameworks in ``variants`` so that a step written for
``api: [pytorch]`` is not contradicted for an incident whose framework has a variant. A
``For <word>:`` line whose names are not all known frameworks is ordinary text.

``mode``, ``frameworks`` and ``fits`` are soft: they move a step up or down. ``unless``,
``sets`` and ``api`` are premises: a step whose premise the incident contradicts is never
the action, and a suggestion (offline or from an LLM) that restates such a step fails
validation (:mod:`rca.suggestion.premises`). Facts the incident does not show contradict
nothing: an unknown is not a no.

The line is stripped from what retrieval indexes and from the steps shown to a provider;
a bad value fails at load with the file, the step and the field named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from rca.corpus.markdown import remediation_of
from rca.corpus.step_facts import FACTS
from rca.corpus.yaml_text import YAMLError, load_yaml

__all__ = [
    "API_FRAMEWORKS",
    "FACTS",
    "MODES",
    "StepMetadata",
    "StepMetadataError",
    "VARIANT_LINE",
    "metadata_line_count",
    "parse_metadata",
    "remediation_with_metadata",
    "split_metadata",
    "strip_metadata",
    "variant_lines",
]

MODES: frozenset[str] = frozenset({"training", "serving"})

#: The frameworks ``api`` may name: those :mod:`rca.suggestion.incident_setting` detects.
API_FRAMEWORKS: frozenset[str] = frozenset(
    {"pytorch", "tensorflow", "jax", "paddle", "mxnet", "onnxruntime", "tensorrt"}
)

_KEYS = ("mode", "frameworks", "fits", "unless", "sets", "api", "says")
_OPTION = re.compile(r"^[A-Za-z_-][A-Za-z0-9_.-]{0,79}$")
# Runbook text only (operator-shipped files), never incident text: plain re is fine.
_LINE = re.compile(r"^[ \t]+Applies:[ \t]*(?P<value>.*?)[ \t]*$", re.MULTILINE)
_STRIP = re.compile(r"\n[ \t]+Applies:[^\n]*")
_FRAMEWORK = re.compile(r"^[a-z0-9][a-z0-9_.+-]{0,39}$")
#: ``For tensorflow: **...**`` / ``For tensorflow, jax: ...``, indented under a step.
VARIANT_LINE = re.compile(
    r"^[ \t]+For[ \t]+(?P<names>[a-z][a-z0-9_]*(?:[ \t]*,[ \t]*[a-z][a-z0-9_]*)*)[ \t]*:"
    r"[ \t]*(?P<text>\S.*?)[ \t]*$",
    re.MULTILINE,
)


def variant_lines(step: str) -> list[tuple[tuple[str, ...], str, re.Match[str]]]:
    """The framework variants of a step: (frameworks, wording, the line's match) each, for
    ``For x:`` lines whose names are all known frameworks."""
    found = []
    for match in VARIANT_LINE.finditer(step):
        names = tuple(name.strip() for name in match.group("names").split(","))
        if all(name in API_FRAMEWORKS for name in names):
            found.append((names, match.group("text"), match))
    return found


class StepMetadataError(ValueError):
    """An ``Applies:`` line is malformed; the message says which field and why."""


@dataclass(frozen=True)
class StepMetadata:
    """When one step applies; the defaults say nothing, so the step competes on its words."""

    mode: str | None = None
    frameworks: tuple[str, ...] = ()
    fits: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()
    api: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()  # frameworks with their own wording (``For x:`` lines)
    says: tuple[str, ...] = ()

    @property
    def has_premises(self) -> bool:
        """Whether any condition can contradict the step (``unless``, ``sets``, ``api``)."""
        return bool(self.unless or self.sets or self.api)


def _names(mapping: dict[str, Any], key: str, lower: bool = True) -> tuple[str, ...]:
    value = mapping.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise StepMetadataError(f"'{key}' must be a list of names, got {value!r}")
    return tuple(dict.fromkeys(item.strip().lower() if lower else item.strip() for item in value))


def parse_metadata(value: str) -> StepMetadata:
    """The metadata of one ``Applies:`` value (a YAML flow mapping)."""
    try:
        mapping = load_yaml(value)
    except YAMLError as exc:
        raise StepMetadataError(f"'Applies:' is not a YAML mapping: {exc}") from exc
    if not isinstance(mapping, dict):
        raise StepMetadataError(f"'Applies:' must be a mapping like {{mode: training}}: {value!r}")
    unknown = sorted(str(key) for key in mapping if key not in _KEYS)
    if unknown:
        raise StepMetadataError(f"unknown key {unknown[0]!r}; known: {', '.join(_KEYS)}")
    mode = mapping.get("mode")
    if mode is not None and mode not in MODES:
        raise StepMetadataError(f"'mode' must be one of {', '.join(sorted(MODES))}, got {mode!r}")
    frameworks = _names(mapping, "frameworks")
    for name in frameworks:
        if not _FRAMEWORK.match(name):
            raise StepMetadataError(f"'frameworks': invalid name {name!r}")
    fits, unless = _names(mapping, "fits"), _names(mapping, "unless")
    for key, facts in (("fits", fits), ("unless", unless)):
        for fact in facts:
            if fact not in FACTS:
                raise StepMetadataError(
                    f"'{key}': unknown fact {fact!r}; known: {', '.join(sorted(FACTS))}"
                )
    sets = _names(mapping, "sets", lower=False)
    for option in sets:
        if not _OPTION.match(option):
            raise StepMetadataError(f"'sets': invalid option name {option!r}")
    api = _names(mapping, "api")
    for name in api:
        if name not in API_FRAMEWORKS:
            raise StepMetadataError(
                f"'api': unknown framework {name!r}; known: {', '.join(sorted(API_FRAMEWORKS))}"
            )
    says = _names(mapping, "says")
    if any(not phrase for phrase in says):
        raise StepMetadataError("'says': empty phrase")
    return StepMetadata(mode, frameworks, fits, unless, sets, api, says=says)


def split_metadata(step: str) -> tuple[str, StepMetadata]:
    """A step's text without its ``Applies:`` line, and the metadata that line gives."""
    lines = list(_LINE.finditer(step))
    if len(lines) > 1:
        raise StepMetadataError("a step has at most one 'Applies:' line")
    variants = tuple(dict.fromkeys(n for names, _, _ in variant_lines(step) for n in names))
    if not lines:
        return step, StepMetadata(variants=variants)
    meta = parse_metadata(lines[0].group("value"))
    return strip_metadata(step), replace(meta, variants=variants)


def metadata_line_count(text: str) -> int:
    """How many ``Applies:`` lines ``text`` has (a body's must all sit under steps)."""
    return len(_LINE.findall(text))


def strip_metadata(text: str) -> str:
    """``text`` without its ``Applies:`` lines: what retrieval indexes and a provider reads."""
    return _STRIP.sub("", text)


def remediation_with_metadata(body: str) -> list[tuple[str, StepMetadata]]:
    """The numbered Remediation steps of a body, each without and with its metadata."""
    return [split_metadata(step) for step in remediation_of(body)]
