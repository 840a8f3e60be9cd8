"""Real incident texts for tests: the dev cases only (never the holdout split).

The lookup lives in :mod:`rca.evaluation.dev_cases`, which the validation-probe scorer
(``rca eval --validation-probe``) shares."""

from rca.evaluation.dev_cases import SOURCES, dev_case, dev_cases

__all__ = ["SOURCES", "dev_case", "dev_cases"]
