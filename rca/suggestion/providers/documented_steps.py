"""The runbook steps a release-notes row makes candidates, wherever retrieval ranked them.

A row of ``rca/knowledge/compatibility/api-changes`` (:mod:`rca.suggestion.api_changes`)
that matches the incident -- the name the message says is missing or rejected, in a package
the texts identify -- is specific evidence for one kind of step: the version step whose
``{documented-change}`` value the row fills ("Downgrade numpy to < 1.24 ... (numpy 1.24
removed `float`; use the builtin ...)"). Retrieval ranks runbooks by the failure's words, so
the runbook holding that step is often not the top one nor of its failure class (an
``object has no attribute`` of a Keras class retrieves attribute-error pages), and only the
top runbook and its near siblings lend steps. When a row matches, the
``{documented-change}`` steps of the other retrieved runbooks join the candidates, unless the
lending runbooks already answer the row: one has such a step about its package, or one
names the removed or added name (``torch-private-module-removed`` names `torch._six`; its
"upgrade the package that imports it" is a better fix than a plain downgrade, which the
row's step would otherwise outscore by the version fact it fits: measured on dev,
docs/MEASUREMENTS.md). A joining step scores its runbook term as at worst a sibling
runbook's (a gap of at most :attr:`~.offline_weights.OfflineWeights.max_score_gap` below
the top, the gap at which a runbook may lend steps at all): the row admits it as retrieval
admits a clear runner-up. The step score carries this into the confidence
(:func:`rca.suggestion.confidence.strength`); the map is not refitted.

A step is the row's only when it is about the row's package: its ``{package}`` value is the
row's (a requirement line may name another component) and its own wording names no other
framework ("Pin `jax` and `jaxlib` together ..." is not a TensorFlow row's step).

When no retrieved runbook answers the row, the row reaches past retrieval
(:func:`documented_runbooks`): the corpus runbooks that do join the evidence. An
``object has no attribute`` of a class that no runbook names (``'Sequential' object has no
attribute 'predict_classes'``) retrieves attribute-error and model-API pages by its words,
and the version runbook, whose signals and symptoms quote other classes, ranks below the
top five; the row is the specific evidence the words lack. Such a runbook joins with score
0 (retrieval ranked it nowhere), so it never lends its other steps: only its row steps
compete, as a sibling runbook's (the gap cap above).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from rca.suggestion.api_changes import DocumentedChange, documented_change
from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.incident_facts import terms
from rca.suggestion.incident_setting import ALIASES, PACKAGES, log_texts
from rca.suggestion.package_moves import package_name

__all__ = ["DOCUMENTED_PLACEHOLDER", "documented_row", "documented_runbooks", "documented_steps"]

#: How a step names the release-notes row's change (:mod:`rca.suggestion.version_pairs`).
DOCUMENTED_PLACEHOLDER = "{documented-change}"


def _framework(name: str) -> str:
    """The framework an import or pip name belongs to (``keras``: tensorflow), else the
    pip name itself."""
    pip = package_name(name)
    key = pip.replace("-", "_")
    return PACKAGES.get(key) or ALIASES.get(key) or pip


def documented_row(ctx: AnalysisContext) -> DocumentedChange | None:
    """The release-notes row that matches the incident, read from the texts the step values
    are filled from (:func:`rca.suggestion.step_values.incident_values`)."""
    code = [str(frame.get("context_line") or "") for frame in ctx.frames]
    return documented_change(ctx.message or "", [*log_texts(ctx.logs), *code])


def _about(written: str, package: str, values: dict[str, str]) -> bool:
    """Whether a ``{documented-change}`` step is about ``package``: its ``{package}`` value is
    that package, and no framework its own wording names is another one."""
    if _framework(values.get("package", "")) != _framework(package):
        return False
    named = {_framework(t) for t in terms(written) if t in PACKAGES or t in ALIASES}
    return named <= {_framework(package)}


def _row_steps(item: Evidence, row: DocumentedChange, values: dict[str, str]) -> list[int]:
    """The positions of ``item``'s ``{documented-change}`` steps about the row's package."""
    return [
        position
        for position, written in enumerate(item.remediation)
        if DOCUMENTED_PLACEHOLDER in written and _about(written, row.package, values)
    ]


def _names(step: str, name: str) -> bool:
    """Whether a step names ``name`` (its last dotted part) as code: after a dot or a
    backtick, not inside a longer identifier (``np.float`` names ``float``, "float32" not)."""
    at = step.find(name)
    while at >= 0:
        end = at + len(name)
        before, after = step[at - 1 : at], step[end : end + 1]
        if before in (".", "`") and not (after.isalnum() or after == "_"):
            return True
        at = step.find(name, at + 1)
    return False


def _covered(runbooks: list[Evidence], row: DocumentedChange, values: dict[str, str]) -> bool:
    """Whether the lending runbooks already answer the row: one has a ``{documented-change}``
    step about its package, or a step that names the removed or added name (a runbook written
    for this very change, whose own fix -- port the call, upgrade the caller -- comes first)."""
    last = row.name.rsplit(".", 1)[-1]
    return any(
        (DOCUMENTED_PLACEHOLDER in step and _about(step, row.package, values)) or _names(step, last)
        for item in runbooks
        for step in item.remediation
    )


def documented_steps(
    ctx: AnalysisContext, values: dict[str, str], lending: list[Evidence]
) -> tuple[set[tuple[str, int]], list[tuple[Evidence, int]]]:
    """The ``{documented-change}`` steps about the package of the row matching the incident:
    every retrieved runbook's, as (slug, position) pairs, and the (runbook, position) of those
    outside ``lending`` (the runbooks lending all their steps) that join the candidates:
    none when the lending runbooks already answer the row (:func:`_covered`). Both empty
    when no row matches (``values``: :func:`rca.suggestion.step_values.incident_values`)."""
    row = documented_row(ctx) if "documented-change" in values else None
    if row is None:
        return set(), []
    seen: set[str] = set()
    steps: list[tuple[Evidence, int]] = []
    for item in ctx.evidence:
        if item.kind != "runbook" or item.slug in seen:
            continue
        seen.add(item.slug)
        steps += [(item, position) for position in _row_steps(item, row, values)]
    pairs = {(item.slug, position) for item, position in steps}
    if _covered(lending, row, values):
        return pairs, []
    slugs = {item.slug for item in lending}
    return pairs, [(item, position) for item, position in steps if item.slug not in slugs]


def documented_runbooks(
    ctx: AnalysisContext, values: dict[str, str], corpus: Callable[[], Iterable[Evidence]]
) -> list[Evidence]:
    """The corpus runbooks with a ``{documented-change}`` step about the package of the row
    matching the incident, when no retrieved runbook answers the row (has such a step, or
    names the removed or added name: :func:`_covered`): retrieval left them out, the row
    brings them in (with score 0). ``corpus`` is called only then (the worker's one
    query); ``values``: :func:`rca.suggestion.step_values.incident_values`."""
    row = documented_row(ctx) if "documented-change" in values else None
    if row is None:
        return []
    retrieved = [item for item in ctx.evidence if item.kind == "runbook"]
    if _covered(retrieved, row, values):
        return []
    seen = {item.slug for item in retrieved}
    joining: list[Evidence] = []
    for item in corpus():
        if item.slug not in seen and _row_steps(item, row, values):
            seen.add(item.slug)
            joining.append(replace(item, score=0.0, kind="runbook"))
    return joining
