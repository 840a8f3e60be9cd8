"""How sure a suggestion is, as a probability fitted on the dev cases, and when to abstain.

The offline provider used to squash the top runbook's retrieval score into 0.05..0.9: a
number that looked like a probability but had never been checked against outcomes. Here
the raw evidence scores of an answer (:class:`Strength`) are mapped to the probability that
the suggested action names the confirmed fix, by a logistic model fitted on the ``dev``
cases only (``bench/calibrate_confidence.py`` refits it and prints the reliability table).
Its coefficients and the abstention threshold live in ONE place,
``rca/suggestion/confidence_params.json``; nothing else in code decides confidence.

Below the threshold Rootcause says it has no confident suggestion
(:class:`Abstention`): the closest runbooks by title and what evidence the incident lacks,
instead of a confident wrong action. The best guess is kept as the draft's action (so it is
validated and audited like any answer) and shown only as a labelled low-confidence guess;
the eval counts an abstention neither as a hit nor as helpful.

What the figures cannot see (``bench/step_choice.py --confidence``, dev, 5-fold): of the dev
cases answered wrong, most chose the right runbook but the wrong step, and retrieval is
strong for them. The chosen step's margin over the next step or the next runbook's step,
the step-support signals and the count of competing steps did not raise the out-of-fold
"right minus wrong" beyond one or two cases. Whether the incident has stack frames did (+7, negative
weight: framed dev cases are mostly misses), but it rests on 16 framed dev cases, half from
one file, and would make a traceback lower the confidence the abstention asks it to raise:
not used. Nor is whether the chosen step rests on a documented fact the incident matched (a
release-notes row, a vendor table's pairing, a ``fits`` fact; 545 dev cases, 5-fold and by
file, docs/MEASUREMENTS.md): such answers are right 87% of the time, but 75 of the 82 are
already answered, and releasing the other 7 (4 right, 3 wrong) gains one at most.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext
    from rca.suggestion.providers.step_ranking import Candidate

__all__ = [
    "NO_CONFIDENT",
    "PARAMS_PATH",
    "Abstention",
    "Calibration",
    "Strength",
    "abstention_for",
    "load_calibration",
    "strength",
]

PARAMS_PATH = Path(__file__).with_name("confidence_params.json")

NO_CONFIDENT = "No confident suggestion"
"""What the UI and Slack say instead of a suggested action when the provider abstained."""

NO_STEP = -2.0
"""The step score when no runbook step validated (the provider then falls back to "apply the
runbook's remediation"): lower than any ranked step, so such an answer is never confident."""

CLOSEST = 3  # runbooks listed by an abstention

MAX_LOGIT = math.log(99)
"""Probabilities stay within 0.01..0.99: figures far outside the dev range (a BM25-scale
score, say) are extrapolation, and a composed suggestion is never certain."""


@dataclass(frozen=True)
class Strength:
    """The raw evidence behind one answer, every figure higher = stronger.

    ``retrieval``: the top runbook's fused retrieval score; ``margin``: how far it is ahead of
    the runner-up runbook (``top - second``, 0 for a tie). Both are in the fused score's own
    units, a share of the fusion's ceiling (:func:`rca.retrieval.fusion.ceiling`), so a fusion
    re-weighting keeps them in 0..1; a difference, not a ratio, because a ratio shrinks with
    every term all runbooks share (the raw cosine). ``step``: the chosen step's
    ranking score (:func:`rca.suggestion.providers.step_ranking.rank_steps`), :data:`NO_STEP`
    when none validated; ``steps``: how many candidate steps validated.
    """

    retrieval: float
    margin: float
    step: float
    steps: int

    def value(self, name: str) -> float:
        return float(getattr(self, name))

    def as_dict(self) -> dict[str, float]:
        return {
            "retrieval": round(self.retrieval, 4),
            "margin": round(self.margin, 4),
            "step": round(self.step, 4),
            "steps": self.steps,
        }


def strength(ctx: AnalysisContext, ranked: list[Candidate]) -> Strength:
    """The evidence figures of the offline provider's answer for ``ctx``."""
    scores = sorted(
        (float(item.score) for item in ctx.evidence if item.kind == "runbook"), reverse=True
    )
    top = scores[0] if scores else 0.0
    second = scores[1] if len(scores) > 1 else 0.0
    margin = top - second
    step = float(ranked[0].score) if ranked else NO_STEP
    return Strength(top, max(margin, 0.0), step, len(ranked))


@dataclass(frozen=True)
class Calibration:
    """A logistic map from :class:`Strength` figures to P(the action names the fix).

    ``p = 1 / (1 + exp(-(intercept + sum(coef[f] * (x[f] - mean[f]) / scale[f]))))``;
    features are standardised by the dev means and scales so the coefficients compare.
    ``threshold``: abstain below it (chosen on dev, see ``bench/calibrate_confidence.py``).
    """

    intercept: float
    coef: dict[str, float]
    mean: dict[str, float]
    scale: dict[str, float]
    threshold: float
    meta: dict[str, Any] = field(default_factory=dict)

    def probability(self, figures: Strength) -> float:
        z = self.intercept
        for name, weight in self.coef.items():
            z += weight * (figures.value(name) - self.mean[name]) / (self.scale[name] or 1.0)
        z = min(max(z, -MAX_LOGIT), MAX_LOGIT)
        return round(1.0 / (1.0 + math.exp(-z)), 3)

    def as_dict(self) -> dict[str, Any]:
        return {
            "intercept": self.intercept,
            "coef": self.coef,
            "mean": self.mean,
            "scale": self.scale,
            "threshold": self.threshold,
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        return cls(
            intercept=float(data["intercept"]),
            coef={str(k): float(v) for k, v in data["coef"].items()},
            mean={str(k): float(v) for k, v in data["mean"].items()},
            scale={str(k): float(v) for k, v in data["scale"].items()},
            threshold=float(data["threshold"]),
            meta=dict(data.get("meta") or {}),
        )


@cache
def load_calibration(path: Path = PARAMS_PATH) -> Calibration:
    """The fitted parameters (read once per process)."""
    return Calibration.from_dict(json.loads(path.read_text(encoding="utf-8")))


# --------------------------------------------------------------------------- abstention


@dataclass(frozen=True)
class Abstention:
    """An abstention, "no confident suggestion": the closest runbooks (slug and title, from
    the corpus: never a link taken from incident text), what evidence would help, and the
    threshold the confidence fell below. The draft's action stays as the best guess."""

    closest: list[dict[str, str]]
    wanted: list[str]
    threshold: float

    def as_dict(self) -> dict[str, Any]:
        return {"closest": self.closest, "wanted": self.wanted, "threshold": self.threshold}


_SHAPE_WORDS = re.compile(r"\b(shape|size|dimension|dim|ndim|mat1|mat2)\b", re.IGNORECASE)
_VERSION = re.compile(r"\b\d+\.\d+(?:\.\d+)?\b|\bversion\b", re.IGNORECASE)


def wanted_evidence(ctx: AnalysisContext) -> list[str]:
    """What the incident lacks that would let a runbook step be chosen, most useful first.

    Read from the incident's own fields only: no stack frames, no log lines, a shape error
    without a shape diff, no version figures, no inference context.
    """
    wanted = []
    if not ctx.frames:
        wanted.append("the full traceback (stack frames), not only the error message")
    if not ctx.logs:
        wanted.append("the log lines printed just before the failure")
    if _SHAPE_WORDS.search(ctx.message or "") and not ctx.shape_diff:
        wanted.append("the tensor shapes involved (expected and actual)")
    texts = [ctx.message or "", *(str(entry.get("message", "")) for entry in ctx.logs)]
    if not any(_VERSION.search(text) for text in texts):
        wanted.append("the framework, CUDA and driver versions")
    if not ctx.inference_context:
        wanted.append("how it runs: training or serving, the launch command or configuration")
    return wanted or ["what changed before the failure (an upgrade, new data, a new config)"]


def abstention_for(ctx: AnalysisContext, threshold: float) -> Abstention:
    """The abstention for ``ctx``: its closest runbooks by title and the evidence it lacks."""
    closest: list[dict[str, str]] = []
    for item in ctx.evidence:
        if item.kind != "runbook" or any(c["slug"] == item.slug for c in closest):
            continue
        closest.append({"slug": item.slug, "title": item.title or item.slug})
        if len(closest) == CLOSEST:
            break
    return Abstention(closest, wanted_evidence(ctx), threshold)
