"""What the analysis pipeline hands to a suggestion provider: the incident's signals and evidence.

Both providers and the validator read the same :class:`AnalysisContext`, so what the LLM was
shown and what its answer is checked against can never drift apart. Everything here is pure
(no Django, no database) so it can be built by hand in tests and benchmarks.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ingest.parsing.frames import Frame
from ingest.parsing.logs import LogEntry
from ingest.parsing.shapes import ShapeDiff
from rca.corpus.markdown import remediation_of
from rca.corpus.step_metadata import StepMetadata, StepMetadataError, split_metadata, strip_metadata

__all__ = [
    "AnalysisContext",
    "Evidence",
    "RunbookText",
    "evidence_from_runbook",
    "innermost_app_frame",
    "remediation",
    "remediation_steps",
]

EvidenceKind = Literal["runbook", "past_fix"]


@dataclass(frozen=True)
class Evidence:
    """One retrieved item shown to the provider.

    ``slug`` is the runbook a suggestion may cite: for ``kind="runbook"`` the runbook itself,
    for ``kind="past_fix"`` the runbook the accepted past suggestion cited, so past fixes
    widen the evidence without widening what may be cited. ``text`` is the retrieved chunk
    (or the past fix's action and reason); ``remediation`` the runbook's numbered steps and
    ``applies`` their metadata, step by step (empty, or defaults, when the runbook has none).
    """

    slug: str
    title: str
    failure_class: str
    text: str
    remediation: tuple[str, ...] = ()
    score: float = 0.0
    kind: EvidenceKind = "runbook"
    applies: tuple[StepMetadata, ...] = ()

    def step_metadata(self, position: int) -> StepMetadata:
        """The metadata of the step at ``position`` (the defaults when it has none)."""
        return self.applies[position] if position < len(self.applies) else StepMetadata()


@dataclass
class AnalysisContext:
    """The signals of one incident plus the retrieved evidence, best evidence first.

    ``frames`` are the raised exception's frames, caller -> callee (the last one raised).
    """

    error_type: str
    message: str
    frames: list[Frame] = field(default_factory=list)
    logs: list[LogEntry] = field(default_factory=list)
    shape_diff: list[ShapeDiff] = field(default_factory=list)
    inference_context: dict[str, Any] = field(default_factory=dict)
    resource_impact: dict[str, Any] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def allowed_slugs(self) -> list[str]:
        """The runbook slugs a suggestion may cite, in evidence order, without duplicates."""
        slugs: list[str] = []
        for item in self.evidence:
            if item.slug and item.slug not in slugs:
                slugs.append(item.slug)
        return slugs

    @property
    def top_runbook(self) -> Evidence | None:
        """The best-ranked runbook evidence (past fixes are not runbooks)."""
        runbooks = [item for item in self.evidence if item.kind == "runbook"]
        return max(runbooks, key=lambda item: item.score) if runbooks else None


def innermost_app_frame(frames: list[Frame]) -> Frame | None:
    """The frame closest to the raise that is the user's own code, else the innermost one.

    The user can edit their own code, so that is the location worth naming; a library frame
    is only a fallback when the stack has no in-app frame at all.
    """
    for frame in reversed(frames):
        if frame.get("in_app"):
            return frame
    return frames[-1] if frames else None


def remediation_steps(runbook_body: str) -> tuple[str, ...]:
    """The numbered steps of a runbook body's ``## Remediation`` section, without numbers
    or metadata.

    Delegates to the corpus parser so that what counts as a step is decided in one place.
    """
    return tuple(strip_metadata(step) for step in remediation_of(runbook_body))


@functools.lru_cache(maxsize=1024)
def remediation(runbook_body: str) -> tuple[tuple[str, ...], tuple[StepMetadata, ...]]:
    """The steps (as :func:`remediation_steps`) and their metadata, aligned.

    A stored body was validated when it was loaded; one that still fails (loaded by an
    older version) gives every step the default metadata rather than no suggestion.
    Cached by body: every analysis wraps its retrieved runbooks again, and each step's
    ``Applies:`` line is YAML (~1 ms each); the answer is immutable tuples.
    """
    try:
        pairs = [split_metadata(step) for step in remediation_of(runbook_body)]
    except StepMetadataError:
        return remediation_steps(runbook_body), ()
    return tuple(step for step, _ in pairs), tuple(meta for _, meta in pairs)


class RunbookText(Protocol):
    """A runbook as evidence is made of it: a parsed file, a stored row, an evaluated one."""

    @property
    def slug(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def failure_class(self) -> str: ...
    @property
    def body(self) -> str: ...


def evidence_from_runbook(
    runbook: RunbookText,
    score: float = 0.0,
    text: str | None = None,
    kind: EvidenceKind = "runbook",
) -> Evidence:
    """Wrap a runbook (``text``: the retrieved chunk; default the whole body, metadata
    stripped; "" for its remediation steps, as for a runbook no chunk of which ranked)."""
    steps, applies = remediation(runbook.body)
    if text is None:
        text = strip_metadata(runbook.body)
    return Evidence(
        slug=runbook.slug,
        title=runbook.title,
        failure_class=runbook.failure_class,
        text=text or "\n".join(steps),
        remediation=steps,
        score=score,
        kind=kind,
        applies=applies,
    )
