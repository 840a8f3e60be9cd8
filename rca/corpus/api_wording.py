"""A runbook lint: Remediation steps whose action is written in one framework's API but
carry no premise saying so.

A step's ``api`` premise (:mod:`rca.corpus.step_metadata`) keeps it from being the action
for an incident whose code shows only other frameworks. A step whose bold action names
``torch.``, ``trtexec`` or ``jnp.`` without one reaches JAX, TF-TRT or C++ users in
PyTorch or TensorRT wording. The names that say which framework an action is written in are
data (``rca/knowledge/framework-api-names.toml``, with the steps kept un-annotated on
purpose and why); this module only reads runbooks against them, for any corpus directory.
Runbook text only, never incident text: plain ``re`` is fine.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rca.corpus.runbook import Runbook
from rca.corpus.step_metadata import API_FRAMEWORKS, StepMetadata, remediation_with_metadata

__all__ = ["NAMES_FILE", "FrameworkNames", "UnmarkedStep", "load_names", "unmarked_steps"]

NAMES_FILE = Path(__file__).resolve().parents[1] / "knowledge" / "framework-api-names.toml"

_BOLD = re.compile(r"\*\*(?P<action>.+?)\*\*", re.DOTALL)


@dataclass(frozen=True)
class FrameworkNames:
    """How code and prose name one framework's API (one table of the names file)."""

    framework: str
    pattern: re.Pattern[str]  # modules, words and calls in one alternation
    packages: frozenset[str]  # names a step's ``frameworks:`` may cover it by


@dataclass(frozen=True)
class UnmarkedStep:
    """A step whose action names a framework's API that its metadata does not cover."""

    slug: str
    step: int  # 1-based, as the runbook numbers it
    frameworks: tuple[str, ...]  # named by the action, not covered
    action: str

    def __str__(self) -> str:
        return f"{self.slug} step {self.step}: names {', '.join(self.frameworks)}: {self.action}"


def _pattern(table: Mapping[str, list[str]]) -> re.Pattern[str]:
    modules = [rf"(?<![\w.]){re.escape(name)}\.[A-Za-z_]" for name in table.get("modules", [])]
    words = [rf"(?i:(?<![\w.]){re.escape(word)}(?!\w))" for word in table.get("words", [])]
    calls = [re.escape(call) for call in table.get("calls", [])]
    return re.compile("|".join([*modules, *words, *calls]) or r"(?!)")


def load_names(path: Path = NAMES_FILE) -> tuple[list[FrameworkNames], dict[str, frozenset[str]]]:
    """The frameworks' names, and the steps (``slug#n``) kept without ``api`` on purpose,
    each with the frameworks it may name uncovered."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    unknown = sorted(set(data) - API_FRAMEWORKS - {"neutral"})
    if unknown:
        raise ValueError(f"{path.name}: {unknown[0]!r} is not a framework `api:` may name")
    names = [
        FrameworkNames(framework, _pattern(table), frozenset(table.get("packages", [])))
        for framework, table in data.items()
        if framework != "neutral"
    ]
    neutral: dict[str, frozenset[str]] = {}
    for group in data.get("neutral", []):
        if not str(group.get("why", "")).strip():
            raise ValueError(f"{path.name}: a [[neutral]] group must say why")
        excused = frozenset(group.get("frameworks") or [n.framework for n in names])
        for step in group["steps"]:
            neutral[step] = neutral.get(step, frozenset()) | excused
    return names, neutral


def _covered(framework: FrameworkNames, meta: StepMetadata) -> bool:
    own = set(meta.api) | set(meta.frameworks)
    return framework.framework in own or bool(framework.packages & set(meta.frameworks))


def unmarked_steps(
    runbooks: Iterable[Runbook], path: Path = NAMES_FILE, *, neutral_steps: bool = True
) -> list[UnmarkedStep]:
    """Steps whose bold action names a framework's API while their ``Applies:`` line covers
    it neither in ``api`` nor in ``frameworks``, they have no ``For <framework>:`` variant,
    and the names file does not keep them neutral (``neutral_steps=False``: as if it kept
    none, to check that each it keeps does name a framework)."""
    names, neutral = load_names(path)
    if not neutral_steps:
        neutral = {}
    found = []
    for runbook in runbooks:
        for number, (text, meta) in enumerate(remediation_with_metadata(runbook.body), 1):
            if meta.variants:
                continue
            excused = neutral.get(f"{runbook.slug}#{number}", frozenset())
            match = _BOLD.search(text)
            action = " ".join((match.group("action") if match else text).split())
            named = [n for n in names if n.pattern.search(action)]
            missing = tuple(
                n.framework for n in named if not _covered(n, meta) and n.framework not in excused
            )
            if missing:
                found.append(UnmarkedStep(runbook.slug, number, missing, action))
    return found
