"""Chunking a runbook (rca.corpus.files): steps stay whole within the budget, no text is
lost, and long paragraphs split at sentence ends (rca.corpus.sentences)."""

from __future__ import annotations

import re

import pytest

from rca.corpus.files import (
    Chunk,
    Runbook,
    chunk_runbook,
    parse_runbook,
    remediation_steps,
)
from rca.corpus.sentences import first_sentence_end, split_sentences
from tests.support.runbook_text import VALID_RUNBOOK


def _words(text: str) -> list[str]:
    return text.split()


@pytest.mark.parametrize("max_chars", [300, 600, 1200])
def test_chunking_keeps_steps_whole_and_respects_budget(
    runbooks: list[Runbook], max_chars: int
) -> None:
    for rb in runbooks:
        chunks = chunk_runbook(rb, max_chars=max_chars)
        assert [c.ordinal for c in chunks] == list(range(len(chunks)))
        steps = remediation_steps(rb)
        for chunk in chunks:
            prefix = f"{rb.title} — {chunk.section}\n"
            assert chunk.text.startswith(prefix)
            assert chunk.runbook_slug == rb.slug and chunk.title == rb.title
            if len(chunk.text) > max_chars:
                # Only a single numbered step (in Remediation: an action with its reason)
                # may exceed the budget, and then it must be alone in its chunk.
                body = chunk.text[len(prefix) :]
                assert re.match(r"\d+[.)] ", body), (rb.slug, max_chars, body[:80])
                assert not re.search(r"\n\d+[.)] ", body), (rb.slug, max_chars, body[:80])
        remediation = " ".join(
            " ".join(_words(c.text[len(f"{rb.title} — Remediation\n") :]))
            for c in chunks
            if c.section == "Remediation"
        )
        for step in steps:
            inside = [c for c in chunks if " ".join(_words(step)) in " ".join(_words(c.text))]
            assert len(inside) == 1, (rb.slug, max_chars, step[:60])
            assert " ".join(_words(step)) in remediation


def test_chunking_loses_no_text_but_the_step_metadata(runbooks: list[Runbook]) -> None:
    for rb in runbooks:
        expected = [
            w
            for line in rb.body.split("\n")
            if not line.startswith("# ") and not line.startswith("## ")
            if not line.lstrip().startswith("Applies:")
            for w in _words(line)
        ]
        got = [
            w
            for c in chunk_runbook(rb, max_chars=400)
            for w in _words(c.text[len(f"{rb.title} — {c.section}\n") :])
        ]
        assert got == expected, rb.slug


def test_oversized_step_is_its_own_chunk() -> None:
    long_reason = "word " * 400
    text = VALID_RUNBOOK.replace("Reason: it works.", f"Reason: {long_reason.strip()}.")
    rb = parse_runbook(text)
    chunks = chunk_runbook(rb, max_chars=300)
    big = [c for c in chunks if len(c.text) > 300]
    assert len(big) == 1
    assert big[0].section == "Remediation"
    assert big[0].text.startswith("Example failure — Remediation\n1. **Do the first thing.**")
    assert "2. **Do the second thing.**" not in big[0].text
    assert all(isinstance(c, Chunk) for c in chunks)


def test_long_paragraph_is_split_at_sentences() -> None:
    paragraph = " ".join(f"Sentence number {i} explains one more detail." for i in range(60))
    rb = parse_runbook(VALID_RUNBOOK.replace("Explain the cause.", paragraph))
    diagnosis = [c for c in chunk_runbook(rb, max_chars=250) if c.section == "Diagnosis"]
    assert len(diagnosis) > 1
    assert all(len(c.text) <= 250 for c in diagnosis)
    assert all(c.text.rstrip().endswith(".") for c in diagnosis)


def test_remediation_steps_strip_numbers() -> None:
    steps = remediation_steps(parse_runbook(VALID_RUNBOOK))
    assert steps == [
        "**Do the first thing.** Reason: it works.",
        "**Do the second thing.** Reason: it also works.",
    ]


# --------------------------------------------------------------------------- sentences


def test_sentences_end_at_a_mark_before_a_sentence_start() -> None:
    text = "Reduce the batch. `x.half()` halves memory! Use bf16 (e.g. On A100) instead? Done."
    assert split_sentences(text) == [
        "Reduce the batch.",
        "`x.half()` halves memory!",
        "Use bf16 (e.g. On A100) instead?",
        "Done.",
    ]


def test_abbreviations_decimals_and_lowercase_starts_end_no_sentence() -> None:
    for text in (
        "Use a smaller lr, i.e. Adam at 1e-4.",
        "Compare fp16 vs. BF16 on this GPU.",
        "Set torch.backends.cudnn.benchmark to False.",
        "Cut the rate to 0.5 and retry. then wait.",
        "Pin numpy, scipy, etc. Before upgrading torch.",
    ):
        assert first_sentence_end(text) == len(text), text


def test_a_line_break_alone_ends_no_sentence() -> None:
    """Runbooks are hard-wrapped: a sentence may go on across lines."""
    assert split_sentences("Reduce the batch size\nAnd retry.") == [
        "Reduce the batch size\nAnd retry."
    ]
    assert split_sentences("Reduce it.\nThen retry.") == ["Reduce it.", "Then retry."]
