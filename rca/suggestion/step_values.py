"""Values of the incident that a runbook step may name as placeholders, and their filling.

A step can say "Set `in_features` to the actual flattened size ({actual-size})": the
offline composer and the prompt show it with this incident's number. A placeholder the
incident gives no value for is dropped with the parenthetical aside around it; one that
cannot be dropped stays, and validation rejects it (:mod:`.checks.placeholders`), so no
suggestion carries an unfilled template.

``actual-size`` / ``expected-size``
    The first dimension where the first shape diff's actual shape differs from the expected
    one (for a matmul, the input's features and the layer's ``in_features``).
``key-prefix``
    The prefix by which the listed state_dict keys differ (``module.``).
``differing-keys``
    The listed state_dict keys that no prefix pairs, or their last names when there are
    more than two (:func:`.state_dict_keys.differing_keys_text`).
``package``, ``target-version``, ``installed-version``, ``library``, ``running-version``,
``built-version``, ``missing-name``
    The component a version-pairing failure names and the versions around it
    (:mod:`.version_pairs`): "Upgrade {package} to {target-version}".
``caller-package``, ``argument``, ``extension-package`` (and ``package``,
``missing-name`` when no version pairing gives them)
    The installed package an API-drift failure points at (:mod:`.api_drift`): "Upgrade
    {caller-package} (it passes {argument} ...)".
``kernel-module-version``, ``driver-library-version``
    The loaded NVIDIA kernel module's version and the user-space driver libraries' when the
    incident shows them out of step (:mod:`.driver_mismatch`): "so the loaded module
    ({kernel-module-version}) matches the libraries ({driver-library-version})".
``modules-not-found``, ``shown-fused-projection``, ``shown-separate-projections``
    The module names PEFT's message lists as not found, and the attention projections the
    printed model shows, fused or separate (:mod:`.projection_layout`), each as
    ```name```: "instead of the names the message lists as not found ({modules-not-found})".
``documented-pairing``
    The release a vendor's compatibility table pairs with the versions the incident names,
    as an action with its direction ("upgrade onnxruntime-gpu to 1.19 or newer, whose
    default build is for CUDA 12.x and cuDNN 9.x ...", :mod:`.compatibility`).
``message-advice``, ``message-advice-quote``
    The remedy the incident's message (or an error-level log line) states itself, as an
    instruction ("Increase `gpu_memory_utilization` when initializing the engine"), and
    the sentence it came from, quoted (:mod:`.message_advice`): only concrete advice (an
    option, flag, variable, method or value, or a package with a direction), never one
    that only sends the reader elsewhere; URLs cut out.
``framework``
    The frameworks the incident's code shows (:mod:`.incident_setting`), comma-separated.
    It also chooses the wording of a step with framework variants (``For tensorflow:``
    lines, :mod:`rca.corpus.step_metadata`): the first variant written for one of them
    replaces the step's own wording; otherwise the step keeps its own and the variant lines
    are dropped. Each consumer (the offline ranking, the audit, the prompt) thereby sees one
    wording per step, the one for this incident's framework.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rca.corpus.step_metadata import variant_lines
from rca.suggestion.api_drift import VALUE_NAMES as DRIFT_VALUES
from rca.suggestion.api_drift import drift_values, read_drift
from rca.suggestion.compatibility import VALUE_NAMES as PAIRING_VALUES
from rca.suggestion.compatibility import documented_pairing
from rca.suggestion.incident_setting import log_texts, setting_of
from rca.suggestion.message_advice import VALUE_NAMES as ADVICE_VALUES
from rca.suggestion.message_advice import advice_values, error_log_texts
from rca.suggestion.projection_layout import VALUE_NAMES as LAYOUT_VALUES
from rca.suggestion.projection_layout import layout_values
from rca.suggestion.state_dict_keys import differing_keys_text, key_prefix
from rca.suggestion.version_pairs import VALUE_NAMES as VERSION_VALUES
from rca.suggestion.version_pairs import version_values

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = ["VALUE_NAMES", "choose_variant", "fill_values", "incident_values", "step_wordings"]

VALUE_NAMES = (
    frozenset({"actual-size", "expected-size", "key-prefix", "differing-keys", "framework"})
    | VERSION_VALUES
    | DRIFT_VALUES
    | PAIRING_VALUES
    | ADVICE_VALUES
    | LAYOUT_VALUES
)
# Runbook text only (operator-shipped steps), short: plain re is fine.
_PLACEHOLDER = re.compile(r"\{([a-z][a-z-]*)\}")
_NUMBER = re.compile(r"^(?P<number>[ ]{0,3}\d+[.)][ \t]+)?")
_NUMBERED_LINE = re.compile(r"\n(?=[ ]{0,3}\d+[.)][ \t])")


def _heads(text: str) -> list[int]:
    """Where each numbered step of ``text`` starts (and the text itself): a step's own
    lines, indented or not, and its variant lines run to the next numbered line."""
    return [0] + [m.start() + 1 for m in _NUMBERED_LINE.finditer(text)]


def _resolve_block(block: str, frameworks: frozenset[str]) -> str:
    """One step: its wording for ``frameworks`` (a variant when one is written for them),
    without any variant line."""
    variants = variant_lines(block)
    if not variants:
        return block
    chosen = next((text for names, text, _ in variants if frameworks & set(names)), None)
    if chosen is None:
        kept = block
        for _, _, match in reversed(variants):
            kept = kept[: match.start()].rstrip("\n") + kept[match.end() :]
        return kept
    number = _NUMBER.match(block)
    prefix = (number.group("number") or "") if number else ""
    return prefix + chosen + block[len(block.rstrip()) :]


def choose_variant(text: str, frameworks: frozenset[str] | set[str]) -> str:
    """``text`` (one step, or a section of numbered steps) with each step worded for
    ``frameworks``: see ``framework`` above."""
    if "For " not in text:
        return text
    starts = _heads(text) + [len(text)]
    blocks = [text[a:b] for a, b in zip(starts, starts[1:], strict=False)]
    return "".join(_resolve_block(block, frozenset(frameworks)) for block in blocks)


def step_wordings(step: str) -> list[tuple[tuple[str, ...], str]]:
    """Each wording of one step: its own (no frameworks) and each variant's."""
    own = choose_variant(step, frozenset())
    return [((), own)] + [(names, text) for names, text, _ in variant_lines(step)]


def _frameworks(values: dict[str, str]) -> frozenset[str]:
    return frozenset(n.strip() for n in values.get("framework", "").split(",") if n.strip())


def incident_values(ctx: AnalysisContext) -> dict[str, str]:
    """The placeholder values this incident gives."""
    values: dict[str, str] = {}
    for diff in ctx.shape_diff[:1]:
        expected, actual = diff.get("expected") or [], diff.get("actual") or []
        for e, a in zip(reversed(expected), reversed(actual), strict=False):
            if e is not None and a is not None and e != a:
                values["expected-size"], values["actual-size"] = str(e), str(a)
                break
    if prefix := key_prefix(ctx.message or ""):
        values["key-prefix"] = prefix
    if differing := differing_keys_text(ctx.message or ""):
        values["differing-keys"] = differing
    if frameworks := setting_of(ctx).frameworks:
        values["framework"] = ", ".join(sorted(frameworks))
    code = [str(frame.get("context_line") or "") for frame in ctx.frames]
    values.update(version_values(ctx.message or "", [*log_texts(ctx.logs), *code]))
    texts = [ctx.message or "", *log_texts(ctx.logs), *code]
    if pairing := documented_pairing(texts, setting_of(ctx).frameworks):
        values["documented-pairing"] = pairing
    drift = read_drift(ctx.message or "", ctx.frames, log_texts(ctx.logs))
    for name, value in drift_values(drift).items():
        values.setdefault(name, value)  # a version pairing's package and name come first
    values.update(advice_values(ctx.message or "", error_log_texts(ctx.logs)))
    values.update(layout_values([ctx.message or "", *log_texts(ctx.logs)]))
    return values


def _enclosing_aside(text: str, at: int) -> tuple[int, int] | None:
    """The span of the innermost "(...)" around ``at`` (with the spaces before it)."""
    depth, start = 0, -1
    for i in range(at - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            if depth == 0:
                start = i
                break
            depth -= 1
    if start < 0:
        return None
    depth = 0
    for j in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return len(text[:start].rstrip()), j + 1
    return None


def fill_values(step: str, values: dict[str, str]) -> str:
    """``step`` with its placeholders filled from ``values``; an aside holding one that has
    no value is dropped. Asides go first and values are put in by one substitution, so an
    incident value that itself looks like a placeholder is never read as one. A step with
    framework variants is first worded for the incident's frameworks."""
    step = choose_variant(step, _frameworks(values))
    start = 0
    while match := _PLACEHOLDER.search(step, start):
        name = match.group(1)
        span = (
            None
            if name in values or name not in VALUE_NAMES
            else _enclosing_aside(step, match.start())
        )
        if span is None:
            start = match.end()  # filled below, or left for validation to reject
            continue
        step = step[: span[0]] + step[span[1] :]
        start = span[0]

    def value(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return _PLACEHOLDER.sub(value, step)
