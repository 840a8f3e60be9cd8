"""A release-notes row reaches the runbook that answers it, past retrieval (issue 16).

``'Sequential' object has no attribute 'predict_classes'`` names a class no runbook quotes,
so retrieval ranks attribute-error pages and the version runbook falls outside the top
five; the API-change row (TensorFlow 2.6 removed ``predict_classes``) is the specific
evidence the words lack. When a row matches and no retrieved runbook has a step that names
a row (``{documented-change}``) about its package, the corpus runbooks that do join the
evidence with score 0 (:func:`rca.suggestion.evidence.with_documented_runbooks`), and only
their row steps compete, as a sibling runbook's.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.context import AnalysisContext, Evidence, evidence_from_runbook
from rca.suggestion.evidence import with_documented_runbooks
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.providers.documented_steps import DOCUMENTED_PLACEHOLDER
from rca.suggestion.providers.step_ranking import rank_steps
from tests.support.evidence import bundled_runbooks, evidence, incident_context

#: What retrieval ranks for an attribute error of a class no runbook names: other pages.
_RETRIEVED = (
    ("dataparallel-wrapped-module-attribute", 0.62),
    ("keras-standalone-vs-tf-keras", 0.55),
)
_VERSION = "version-api-changed-signature"


def _corpus() -> list[Evidence]:
    """The bundled runbooks that name a release-notes row, as the worker's query finds them."""
    return [
        evidence_from_runbook(rb, text="")
        for slug, rb in sorted(bundled_runbooks().items())
        if DOCUMENTED_PLACEHOLDER in rb.body
    ]


def _never() -> list[Evidence]:
    raise AssertionError("the corpus is asked only when a row matches and nothing answers it")


def _context(message: str, *ranked: tuple[str, float]) -> AnalysisContext:
    return incident_context(message, *(ranked or _RETRIEVED))


@pytest.mark.parametrize(
    ("message", "replacement"),
    [
        ("AttributeError: 'Sequential' object has no attribute 'predict_classes'", "argmax"),
        ("AttributeError: 'Sequential' object has no attribute 'predict_proba'", "argmax"),
        ("AttributeError: 'DataFrame' object has no attribute 'append'", "concat"),
        ("AttributeError: 'ImageDraw' object has no attribute 'textsize'", "textbbox"),
    ],
)
def test_a_matching_row_brings_its_runbook_into_the_evidence(
    message: str, replacement: str
) -> None:
    ctx = with_documented_runbooks(_context(message), _corpus)
    joined = [item for item in ctx.evidence if item.slug == _VERSION]
    assert len(joined) == 1 and joined[0].score == 0.0
    suggestion = OfflineProvider().suggest(ctx)
    assert suggestion.runbook == _VERSION
    assert replacement in suggestion.action, suggestion.action


def test_without_a_row_the_corpus_is_not_asked() -> None:
    ctx = _context("AttributeError: 'Sequential' object has no attribute 'fit_generatorx'")
    assert with_documented_runbooks(ctx, _never) is ctx


def test_a_retrieved_runbook_that_answers_the_row_is_enough() -> None:
    message = "AttributeError: 'Sequential' object has no attribute 'predict_classes'"
    ctx = _context(message, (_VERSION, 0.7), *_RETRIEVED)
    assert with_documented_runbooks(ctx, _never) is ctx


def test_a_joining_runbook_lends_only_its_row_steps() -> None:
    message = "AttributeError: 'DataFrame' object has no attribute 'append'"
    ctx = with_documented_runbooks(_context(message), _corpus)
    retrieved = {slug for slug, _ in _RETRIEVED}
    joined = [item for item in ctx.evidence if item.slug not in retrieved]
    assert _VERSION in {item.slug for item in joined}
    assert all(item.score == 0.0 for item in joined)
    for candidate in rank_steps(ctx):
        if candidate.evidence.slug not in retrieved:
            written = candidate.evidence.remediation[candidate.position]
            assert DOCUMENTED_PLACEHOLDER in written and candidate.documented


@settings(max_examples=20, deadline=None)
@given(
    top=st.floats(0.3, 0.95),
    second=st.floats(0.05, 0.29),
    variable=st.sampled_from(["model", "clf", "net", "m2"]),
    line=st.integers(1, 999),
)
def test_metamorphic_renamed_code_and_scores_keep_the_choice(
    top: float, second: float, variable: str, line: int
) -> None:
    message = "AttributeError: 'Sequential' object has no attribute 'predict_classes'"
    frames = [
        {
            "filename": f"/srv/app{line}/predict.py",
            "function": "main",
            "lineno": line,
            "context_line": f"labels = {variable}.predict_classes(batch)",
            "in_app": True,
        }
    ]
    ranked = ((_RETRIEVED[0][0], top), (_RETRIEVED[1][0], top - second))
    ctx = incident_context(message, *ranked, frames=frames)
    ctx = with_documented_runbooks(ctx, _corpus)
    suggestion = OfflineProvider().suggest(ctx)
    assert suggestion.runbook == _VERSION and "argmax" in suggestion.action


def test_evidence_helper_keeps_the_steps_and_their_premises() -> None:
    rb = bundled_runbooks()[_VERSION]
    item = evidence_from_runbook(rb, text="")
    [retrieved] = evidence((_VERSION, 0.5))
    assert item.remediation == retrieved.remediation and item.applies == retrieved.applies


def test_a_runbook_no_chunk_of_which_ranked_shows_its_steps() -> None:
    """One wrapper for every runbook: a retrieved one shows its chunk (or its body), a
    joining one, that no chunk ranked, its steps with score 0 (issue 16, one rule, one place)."""
    rb = bundled_runbooks()[_VERSION]
    joining = evidence_from_runbook(rb, text="")
    assert joining.text == "\n".join(joining.remediation) and joining.score == 0.0
    assert joining.kind == "runbook" and joining.remediation
    assert evidence_from_runbook(rb, 0.4, text="a chunk").text == "a chunk"
    assert "## Remediation" in evidence_from_runbook(rb, 0.4).text


@pytest.mark.django_db
def test_the_worker_finds_the_row_runbooks_in_the_stored_corpus(tmp_path) -> None:
    from rca.corpus.files import bundled_runbook_dir
    from rca.corpus.store import load_runbooks
    from rca.suggestion.evidence import stored_documented_runbooks

    for name in (f"{_VERSION}.md", f"{_RETRIEVED[0][0]}.md"):
        (tmp_path / name).write_text((bundled_runbook_dir() / name).read_text())
    load_runbooks(tmp_path)
    [stored] = stored_documented_runbooks()
    [bundled] = [item for item in _corpus() if item.slug == _VERSION]
    assert stored == bundled
