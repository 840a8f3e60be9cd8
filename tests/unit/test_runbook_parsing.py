"""Loading and parsing runbooks (rca.corpus.files): the corpus version, bad input refused
naming the field, and the step metadata of Applies lines (rca.corpus.step_metadata)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rca.corpus.files import (
    RunbookError,
    bundled_runbook_dir,
    chunk_runbook,
    corpus_version,
    load_directory,
    match_signals,
    parse_runbook,
    remediation_steps,
)
from rca.corpus.step_metadata import StepMetadata, remediation_with_metadata
from tests.support.runbook_text import VALID_RUNBOOK

# --------------------------------------------------------------------------- versioning


def test_corpus_version_changes_when_one_file_changes(tmp_path: Path) -> None:
    copy = tmp_path / "runbooks"
    shutil.copytree(bundled_runbook_dir(), copy)
    before = corpus_version(load_directory(copy))
    assert before == corpus_version(load_directory(bundled_runbook_dir()))
    assert before == corpus_version(reversed(load_directory(copy)))
    target = sorted(copy.glob("*.md"))[0]
    target.write_text(target.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    after = corpus_version(load_directory(copy))
    assert after != before
    target.unlink()
    assert corpus_version(load_directory(copy)) not in (before, after)


def test_load_directory_reads_only_markdown_and_names_bad_files(tmp_path: Path) -> None:
    (tmp_path / "example-runbook.md").write_text(VALID_RUNBOOK, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a runbook", encoding="utf-8")
    assert [rb.slug for rb in load_directory(tmp_path)] == ["example-runbook"]
    (tmp_path / "broken.md").write_text("---\nslug: [unclosed\n---\ntext\n", encoding="utf-8")
    with pytest.raises(RunbookError, match="broken.md"):
        load_directory(tmp_path)
    with pytest.raises(RunbookError, match="directory"):
        load_directory(tmp_path / "missing")


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("text", "source", "field"),
    [
        ("---\nslug: x\n", "", "front matter"),
        ("---\n---\n\n", "", "body"),
        (VALID_RUNBOOK.replace("title: Example failure", "title: ''"), "", "title"),
        (VALID_RUNBOOK.replace("title: Example failure", f"title: {'x' * 256}"), "", "title"),
        (VALID_RUNBOOK.replace("  - 'example failure \\d+'", "  - ''"), "", "signals"),
        ("---\n- a list\n---\nbody\n", "", "front matter"),
        ("---\nslug: [unclosed\n---\nbody\n", "", "front matter"),
        (VALID_RUNBOOK.replace("slug: example-runbook", "slug: Bad Slug"), "", "slug"),
        (VALID_RUNBOOK, "/tmp/other-name.md", "slug"),
        (
            VALID_RUNBOOK.replace("failure_class: cuda_oom", "failure_class: oom"),
            "",
            "failure_class",
        ),
        (VALID_RUNBOOK.replace("  - 'example failure \\d+'", "  - '(unclosed'"), "", "signals"),
        (VALID_RUNBOOK.replace("  - 'example failure \\d+'", "  - '.*'"), "", "signals"),
        (VALID_RUNBOOK.replace("frameworks: [pytorch]", "frameworks: pytorch"), "", "frameworks"),
        (VALID_RUNBOOK.replace("tags: [example]", "tags: [example]\nsignal: x"), "", "signal"),
    ],
)
def test_bad_runbook_raises_error_naming_the_field(text: str, source: str, field: str) -> None:
    with pytest.raises(RunbookError) as info:
        parse_runbook(text, source=source)
    assert info.value.field == field
    assert f"'{field}'" in str(info.value)
    if source:
        assert source in str(info.value)


def test_valid_runbook_parses_with_matching_source() -> None:
    rb = parse_runbook(VALID_RUNBOOK.replace("\n", "\r\n"), source="/x/example-runbook.md")
    assert rb.slug == "example-runbook"
    assert rb.frameworks == ("pytorch",)
    assert rb.signals == ("example failure \\d+",)
    assert rb.checksum == parse_runbook(VALID_RUNBOOK).checksum
    assert match_signals(rb, "RuntimeError: EXAMPLE FAILURE 7") == rb.signals


# --------------------------------------------------------------------------- step metadata

_WITH_METADATA = VALID_RUNBOOK.replace(
    "1. **Do the first thing.** Reason: it works.\n",
    "1. **Do the first thing.** Reason: it works.\n"
    "   Applies: {mode: serving, frameworks: [vLLM], fits: [batch-axis-missing]}\n",
)


def test_step_metadata_is_read_and_kept_out_of_steps_and_chunks() -> None:
    rb = parse_runbook(_WITH_METADATA)
    assert remediation_steps(rb) == remediation_steps(parse_runbook(VALID_RUNBOOK))
    assert all("Applies" not in chunk.text for chunk in chunk_runbook(rb))
    (first, meta), (_, default) = remediation_with_metadata(rb.body)
    assert first == "**Do the first thing.** Reason: it works."
    assert meta == StepMetadata("serving", ("vllm",), ("batch-axis-missing",), ())
    assert default == StepMetadata()


@pytest.mark.parametrize(
    ("applies", "problem"),
    [
        ("{mode: inference}", "'mode' must be one of serving, training"),
        ("{fits: [batch-missing]}", "'fits': unknown fact 'batch-missing'; known: "),
        ("{unless: memory-fragmented, when: x}", "unknown key 'when'"),
        ("{frameworks: [a b]}", "'frameworks': invalid name 'a b'"),
        ("[training]", "'Applies:' must be a mapping"),
    ],
)
def test_bad_step_metadata_fails_at_load_naming_the_step(applies: str, problem: str) -> None:
    text = _WITH_METADATA.replace(
        "{mode: serving, frameworks: [vLLM], fits: [batch-axis-missing]}", applies
    )
    with pytest.raises(RunbookError) as caught:
        parse_runbook(text, "custom/example-runbook.md")
    assert caught.value.field == "Remediation step 1"
    assert problem in caught.value.problem


def test_step_metadata_outside_a_step_is_refused() -> None:
    text = VALID_RUNBOOK.replace("Explain the cause.", "Explain the cause.\n   Applies: {}")
    with pytest.raises(RunbookError, match="indented under a numbered Remediation step"):
        parse_runbook(text)
