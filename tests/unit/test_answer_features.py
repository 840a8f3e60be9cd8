"""The bench's "documented fact" figure of an answer (bench/answer_features.py, issue 16 item 4).

Measured as a confidence input on 545 dev cases and not landed (docs/MEASUREMENTS.md); these
tests keep the bench's figure honest for the next measurement: it is computed for every
answer alike, 1 when the chosen step fills the release-notes row matching the incident, 0
when no row matches the same package's missing name.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from rca.suggestion.providers import OfflineProvider
from tests.support.evidence import incident_context

BENCH = Path(__file__).resolve().parents[2] / "bench" / "answer_features.py"
#: A top runbook about another failure, and the version runbook with the row's step below it.
FAR = (("dataparallel-wrapped-module-attribute", 0.9), ("version-api-changed-signature", 0.45))


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("answer_features", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _figures(message: str, log: str) -> dict[str, float]:
    ctx = incident_context(message, *FAR, logs=[log])
    draft = OfflineProvider().suggest(ctx)
    figures: dict[str, float] = _bench().answer_features(ctx, [], draft.runbook)
    return figures


@pytest.mark.parametrize(
    ("package", "removed", "log"),
    [("numpy", "float", "numpy==1.26.4"), ("torch", "compile", "torch==1.13.1")],
)
def test_an_answer_from_a_matched_release_notes_row_is_documented(package, removed, log):
    figures = _figures(f"AttributeError: module '{package}' has no attribute '{removed}'", log)
    assert figures["documented"] == 1.0 and figures["x_doc_row"] == 1.0


@pytest.mark.parametrize(
    ("package", "log"), [("numpy", "numpy==1.26.4"), ("torch", "torch==2.1.0")]
)
def test_a_missing_name_no_row_knows_is_not_documented(package, log):
    figures = _figures(f"AttributeError: module '{package}' has no attribute 'frobnicate'", log)
    assert figures["documented"] == 0.0 and figures["x_doc_row"] == 0.0
    assert figures["x_fits"] == 0.0 and figures["x_doc_pairing"] == 0.0
