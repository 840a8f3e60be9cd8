"""Fitting the confidence model and checking it (pure; numpy only).

Three small, well-known tools, so that ``bench/calibrate_confidence.py`` and the tests share
one implementation:

- :func:`fit_logistic`: L2-regularised logistic regression by Newton's method (IRLS) on
  standardised features; a handful of features and ~100 cases need nothing more.
- :func:`reliability`: the reliability table, predicted vs observed per probability bin,
  plus the expected calibration error (ECE) and the Brier score.
- :func:`choose_threshold`: the abstention threshold that maximises, on dev, answered right
  minus answered wrong (a wrong confident action costs as much as a right one gains),
  among thresholds that keep at least ``min_answered`` of the cases answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rca.suggestion.confidence import Calibration, Strength

__all__ = ["Bin", "Reliability", "choose_threshold", "fit_logistic", "reliability"]


def fit_logistic(
    rows: Sequence[Strength],
    labels: Sequence[bool],
    features: Sequence[str],
    *,
    l2: float = 1.0,
    weights: Sequence[float] | None = None,
    threshold: float = 0.5,
) -> Calibration:
    """Fit ``P(label) = sigmoid(b + w . standardised(x))`` by IRLS with an L2 penalty ``l2``
    on ``w`` (not on ``b``); ``weights`` per row (default 1)."""
    x = np.array([[row.value(name) for name in features] for row in rows], dtype=float)
    y = np.array([1.0 if label else 0.0 for label in labels])
    w_rows = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    design = np.hstack([np.ones((len(y), 1)), (x - mean) / scale])
    beta = np.zeros(design.shape[1])
    penalty = np.eye(design.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -30, 30)))
        gradient = design.T @ (w_rows * (y - p)) - penalty @ beta
        hessian = (design * (w_rows * p * (1 - p))[:, None]).T @ design + penalty
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(beta)), gradient)
        beta += step
        if float(np.abs(step).max()) < 1e-10:
            break
    return Calibration(
        intercept=round(float(beta[0]), 6),
        coef={name: round(float(b), 6) for name, b in zip(features, beta[1:], strict=True)},
        mean={name: round(float(m), 6) for name, m in zip(features, mean, strict=True)},
        scale={name: round(float(s), 6) for name, s in zip(features, scale, strict=True)},
        threshold=threshold,
    )


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    cases: int
    predicted: float  # mean predicted probability in the bin
    observed: float  # share of the bin's cases whose action named the fix


@dataclass(frozen=True)
class Reliability:
    bins: list[Bin]
    ece: float  # sum over bins of |predicted - observed| * share of cases
    brier: float
    cases: int

    def format(self, title: str) -> str:
        lines = [
            f"{title}: {self.cases} cases, ECE {self.ece:.3f}, Brier {self.brier:.3f}",
            f"  {'bin':<12}{'cases':>6}{'predicted':>11}{'observed':>10}",
        ]
        for b in self.bins:
            label = f"{b.low:.1f}-{b.high:.1f}"
            if not b.cases:
                lines.append(f"  {label:<12}{0:>6}{'-':>11}{'-':>10}")
                continue
            lines.append(f"  {label:<12}{b.cases:>6}{b.predicted:>11.3f}{b.observed:>10.3f}")
        return "\n".join(lines)


def reliability(predicted: Sequence[float], observed: Sequence[bool], bins: int = 5) -> Reliability:
    """Predicted vs observed in ``bins`` equal-width probability bins."""
    p = np.asarray(predicted, dtype=float)
    y = np.asarray([1.0 if o else 0.0 for o in observed])
    edges = np.linspace(0.0, 1.0, bins + 1)
    rows, ece = [], 0.0
    for i in range(bins):
        inside = (p >= edges[i]) & ((p < edges[i + 1]) if i < bins - 1 else (p <= edges[i + 1]))
        n = int(inside.sum())
        mean_p = float(p[inside].mean()) if n else 0.0
        mean_y = float(y[inside].mean()) if n else 0.0
        rows.append(Bin(float(edges[i]), float(edges[i + 1]), n, mean_p, mean_y))
        ece += abs(mean_p - mean_y) * n / max(len(p), 1)
    brier = float(((p - y) ** 2).mean()) if len(p) else 0.0
    return Reliability(rows, ece, brier, len(p))


def choose_threshold(
    predicted: Sequence[float], observed: Sequence[bool], min_answered: float = 0.5
) -> float:
    """The abstention threshold with the best (right - wrong) among answered cases on dev.

    Candidates are the midpoints between distinct predicted values (and 0: never abstain);
    ties go to the lowest threshold (abstain as little as the data allows).
    """
    p = np.asarray(predicted, dtype=float)
    y = np.asarray([1.0 if o else 0.0 for o in observed])
    values = np.unique(p)
    candidates = [0.0, *((values[:-1] + values[1:]) / 2).tolist()]
    best, best_gain = 0.0, -np.inf
    for threshold in candidates:
        answered = p >= threshold
        if answered.mean() < min_answered:
            continue
        gain = float((2 * y[answered] - 1).sum())
        if gain > best_gain + 1e-12:
            best, best_gain = float(threshold), gain
    return round(best, 3)
