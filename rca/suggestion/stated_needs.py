"""What the message says the fix needs, for the premise check: a CUDA build of a package
(:mod:`.build_variants`) and a value a setting must have (:mod:`.required_values`).

An answer that installs the CPU-only build of that package, or sets that setting to another
value, goes against the message's own words: :meth:`StatedNeeds.harms` says why, and the
premise check (:func:`rca.suggestion.premises.shown_harms`) rejects it, offline or from an
LLM.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rca.suggestion.build_variants import cpu_build_harms, cuda_builds_needed
from rca.suggestion.required_values import RequiredValue, required_values, values_against

__all__ = ["StatedNeeds", "read_stated_needs"]


@dataclass(frozen=True)
class StatedNeeds:
    """Packages the message says must be a CUDA build (package -> its words) and the values
    it says settings must have."""

    cuda_builds: Mapping[str, str] = field(default_factory=dict)
    values: tuple[RequiredValue, ...] = ()

    def harms(self, action: str) -> list[str]:
        """Why ``action`` goes against what the message says the fix needs."""
        return [
            *cpu_build_harms(action, dict(self.cuda_builds)),
            *values_against(action, self.values),
        ]

    def as_lines(self) -> list[str]:
        """The needs in words, for the prompt."""
        lines = [
            f"needs a CUDA build of {package or 'the package'} (the message says: {words}):"
            " never install its CPU-only build"
            for package, words in sorted(self.cuda_builds.items())
        ]
        return lines + [
            f"required: the {need.key.replace('_', ' ')} must be '{need.value}' (the message"
            f" says: {need.phrase}): never set another"
            for need in self.values
        ]


def read_stated_needs(texts: Sequence[str]) -> StatedNeeds:
    """The needs the message and log lines state."""
    return StatedNeeds(cuda_builds_needed(texts), required_values(texts))
