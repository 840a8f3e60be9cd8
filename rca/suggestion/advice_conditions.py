"""Whether the remedy an error message names can be this incident's fix: not already done,
not conditional on something the incident contradicts.

A message's advice (:mod:`.message_advice`) is written for everyone who meets the error, so
two things about this incident can rule it out:

- the incident already shows it done: the option it says to set is shown set to that value
  (:class:`rca.suggestion.premises.Premises`, read from every place
  :mod:`.shown_options` looks), so the cause is elsewhere;
- its sentence makes it conditional ("If you are using TensorFlow, set ...", "When running
  on CPU, pass ...", "unless you use JAX") and the condition names a framework or a device
  that the incident contradicts: its code runs only other frameworks, or its inference
  context names another device. A condition that names neither (most of them: "if you
  cannot regenerate your protos") rules nothing out, since nothing in the incident can
  check it.

Frameworks are named as :mod:`.incident_setting` names packages; devices by a short table of
the device kinds an inference context states. The sentence is already bounded and URL-free
(:attr:`Advice.sentence`); patterns are RE2 (:mod:`ingest.linear_regex`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ingest.linear_regex import compile as linear
from rca.suggestion.incident_setting import PACKAGES
from rca.suggestion.message_advice import Advice
from rca.suggestion.premises import Premises
from rca.suggestion.step_options import option_key

__all__ = [
    "MAX_CONDITIONS",
    "advice_ruled_out",
    "already_done",
    "conditions_of",
    "contradicted_condition",
]

#: Advice verbs that put an option into a state the incident can show: when it already
#: shows that state, the advice repeats what is done. ("increase", "change" and "reduce"
#: move a value, which a shown value does not contradict.)
_SETTING_VERBS = frozenset({"set", "pass", "enable", "use", "add", "specify", "provide"})
_ON = frozenset({"", "true", "1", "on", "yes", "enabled"})
_OFF = frozenset({"false", "0", "off", "no", "disabled"})
#: Device kinds a condition or an inference context's ``device`` field names.
DEVICES: Mapping[str, str] = {
    "cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "rocm": "gpu", "tpu": "tpu", "mps": "mps",
    "xpu": "xpu", "npu": "npu",
}  # fmt: skip
#: Framework names as prose spells them, besides the package names.
_PROSE_FRAMEWORKS: Mapping[str, str] = {"pytorch": "pytorch", "tensorrt": "tensorrt"}
_CONDITION = linear(
    r"\b(if|when|whenever|unless|in\s+case|only\s+for|only\s+on)\s+([^,;:.!?]{1,100})",
    ignore_case=True,
)
_NEGATION = linear(r"\b(?:not|no|never|without)\b|n't\b", ignore_case=True)
_WORD = linear(r"[A-Za-z][A-Za-z0-9_]*")
MAX_CONDITIONS = 3


def conditions_of(sentence: str) -> list[tuple[str, bool]]:
    """The conditional clauses of an advice sentence, each with whether it is negated
    ("unless ...", "if you are not using ...")."""
    found = []
    for match in _CONDITION.finditer(sentence):
        keyword, clause = match.group(1).lower(), match.group(2)
        found.append((clause, keyword == "unless" or bool(_NEGATION.search(clause))))
        if len(found) == MAX_CONDITIONS:
            break
    return found


def _named(clause: str) -> tuple[set[str], set[str]]:
    """The frameworks and the device kinds a condition names."""
    frameworks: set[str] = set()
    devices: set[str] = set()
    for word in (w.lower() for w in _WORD.findall(clause)):
        if len(word) > 2 and word in PACKAGES:  # "tf" alone is too short to trust in prose
            frameworks.add(PACKAGES[word])
        elif word in _PROSE_FRAMEWORKS:
            frameworks.add(_PROSE_FRAMEWORKS[word])
        if word in DEVICES:
            devices.add(DEVICES[word])
    return frameworks, devices


def incident_device(inference_context: Mapping[str, Any] | None) -> str | None:
    """The device kind the inference context states (``cuda:0`` -> gpu), or None."""
    device = str((inference_context or {}).get("device") or "").strip().lower()
    kind = device.split(":", 1)[0]
    return DEVICES.get(kind)


def contradicted_condition(
    advice: Advice, frameworks: frozenset[str], device: str | None
) -> str | None:
    """Why the incident contradicts a condition of the advice's sentence, or None."""
    for clause, negated in conditions_of(advice.sentence):
        named_frameworks, named_devices = _named(clause)
        for named, own, what in (
            (named_frameworks, set(frameworks), "code runs"),
            (named_devices, {device} if device else set(), "device is"),
        ):
            if not named or not own:
                continue
            said = ", ".join(sorted(named & own if negated else own))
            if negated and named & own:
                return f"the advice is for when not '{clause.strip()}'; the {what} {said}"
            if not negated and not named & own:
                return f"the advice is for '{clause.strip()}'; the incident's {what} {said}"
    return None


def _same_value(shown: str, given: str) -> bool:
    a, b = shown.strip().strip("`'\"").lower(), given.strip().strip("`'\"").lower()
    return a == b or (a in _ON and b in _ON) or (a in _OFF and b in _OFF)


def already_done(advice: Advice, premises: Premises) -> str | None:
    """How the incident shows the advice's first option already set as it advises, or None."""
    if advice.verb not in _SETTING_VERBS or not advice.options:
        return None
    name = advice.options[0].split("=", 1)[0]
    shown = premises.shown(option_key(name))
    if shown is None:
        return None
    given = advice.value if advice.value is not None else advice.options[0].partition("=")[2]
    if given and not _same_value(shown[1], given):
        return None
    return f"the incident shows {shown[0]}" + (f"={shown[1]}" if shown[1] else "") + " already"


def advice_ruled_out(
    advice: Advice, premises: Premises, inference_context: Mapping[str, Any] | None
) -> str | None:
    """Why this incident rules the message's advice out as its fix, or None: it shows it
    done, or a condition of its sentence is contradicted."""
    return already_done(advice, premises) or contradicted_condition(
        advice, premises.frameworks, incident_device(inference_context)
    )
