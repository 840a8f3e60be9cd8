"""A team's plain Markdown is a runbook: no front matter, no signals, odd headings, other
encodings; and `import_dir` brings a folder of it in, page by page, idempotently."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rca.corpus.files import (
    RunbookError,
    chunk_runbook,
    load_directory,
    match_signals,
    parse_runbook,
    read_text,
    remediation_steps,
    without_signals,
)
from rca.corpus.importing import canonical_text, import_dir
from tests.support.runbook_text import VALID_RUNBOOK

_PAGE = "# GPU ran out of memory\n\nTraining stops with CUDA out of memory.\n\n- Lower the batch.\n"


def test_page_without_front_matter_takes_title_from_heading_and_slug_from_file() -> None:
    rb = parse_runbook(_PAGE, source="/wiki/GPU Out of Memory (v2).md")
    assert rb.slug == "gpu-out-of-memory-v2"
    assert rb.title == "GPU ran out of memory"
    assert (rb.failure_class, rb.signals, rb.tags, rb.frameworks) == ("", (), (), ())
    chunks = chunk_runbook(rb)
    assert chunks and "Lower the batch." in chunks[0].text
    assert match_signals(rb, "RuntimeError: CUDA out of memory") == ()


def test_numbered_steps_under_any_heading_are_the_remediation_of_a_plain_page() -> None:
    page = (
        "# Deadline exceeded\n\nIntro.\n\n- a bullet\n\n## What we do\n\n"
        "1. Raise the client deadline.\n2. Add replicas.\n\n## Later\n\n1. Other list.\n"
    )
    assert remediation_steps(parse_runbook(page)) == ["Raise the client deadline.", "Add replicas."]
    named = page.replace("## Later", "## Remediation")
    assert remediation_steps(parse_runbook(named)) == ["Other list."]
    assert remediation_steps(parse_runbook("# T\n\n- only bullets\n")) == []


def test_front_matter_without_signals_or_sections_loads_with_its_class() -> None:
    text = "---\nfailure_class: host_oom\ntags: [Memory]\n---\nThe pod was OOMKilled.\n"
    rb = parse_runbook(text, source="oomkilled.md")
    assert (rb.slug, rb.title, rb.failure_class, rb.tags) == (
        "oomkilled",
        "oomkilled",
        "host_oom",
        ("memory",),
    )


@pytest.mark.parametrize(
    ("body", "title"),
    [
        ("Setext title\n============\n\ntext\n", "Setext title"),
        ("Second level\n---\n\ntext\n", "Second level"),
        ("intro\n\n### Deep  heading ###\n", "Deep heading"),
        ("```\n# not a heading\n```\n\n## Real one\n", "Real one"),
        ("#hashtag is not a heading\n\ntext\n", "flaky gpu"),
        ("#\n\n## \n\n- a list\n---\n", "flaky gpu"),
        ("# C# is fine #\n", "C# is fine"),
        ("# Title ends with #\n", "Title ends with"),
        ("# " + "long " * 100 + "\n", ("long " * 100).strip()[:255]),
    ],
)
def test_title_is_the_first_real_heading_else_the_file_name(body: str, title: str) -> None:
    assert parse_runbook(body, source="notes/flaky_gpu.md").title == title


def test_sources_are_kept_and_survive_import(tmp_path: Path) -> None:
    text = "---\nsources: [https://example.org/faq]\n---\n# OOM\n\nLower the batch.\n"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "oom.md").write_text(text, encoding="utf-8")
    assert parse_runbook(text, source="oom.md").sources == ("https://example.org/faq",)
    import_dir(tmp_path / "in", tmp_path / "out")
    assert load_directory(tmp_path / "out")[0].sources == ("https://example.org/faq",)
    with pytest.raises(RunbookError, match="'sources'"):
        parse_runbook("---\nsources: https://example.org\n---\nx\n", source="x.md")


def test_given_fields_are_still_validated() -> None:
    bad = "---\nfailure_class: cuda_oom\nsignals: ['.*']\n---\ntext\n"
    with pytest.raises(RunbookError, match="catch-all"):
        parse_runbook(bad, source="x.md")


def test_without_signals_keeps_everything_but_signals() -> None:
    (rb,) = without_signals([parse_runbook(VALID_RUNBOOK)])
    assert rb.signals == () and rb.body == parse_runbook(VALID_RUNBOOK).body
    assert rb.failure_class == "cuda_oom"


def test_encodings_utf16_read_and_latin1_refused_naming_byte(tmp_path: Path) -> None:
    (tmp_path / "utf16.md").write_bytes("# Café\n\ntext\n".encode("utf-16"))
    assert read_text(tmp_path / "utf16.md").startswith("# Café")
    (tmp_path / "latin.md").write_bytes("# Café\n\ntext\n".encode("latin-1"))
    with pytest.raises(RunbookError) as caught:
        read_text(tmp_path / "latin.md")
    assert caught.value.field == "encoding" and "latin.md" in str(caught.value)
    assert "byte 0xe9 at offset 5" in caught.value.problem


def _team_folder(root: Path) -> Path:
    (root / "ops" / "gpu").mkdir(parents=True)
    (root / "ops" / "gpu" / "CUDA OOM.md").write_text(_PAGE, encoding="utf-8")
    (root / "ops" / "timeouts.markdown").write_text(
        "---\ntitle: Upstream timeouts\nfailure_class: grpc_or_timeout\n---\n"
        "DEADLINE_EXCEEDED from the model server: raise the client deadline.\n",
        encoding="utf-8",
    )
    (root / "ops" / "latin.md").write_bytes("# Café\n\nrésumé\n".encode("latin-1"))
    (root / "empty.md").write_bytes(b"")
    (root / "title-only.md").write_text("# Just a title\n", encoding="utf-8")
    (root / "bad-class.md").write_text("---\nfailure_class: oom\n---\nx\n", encoding="utf-8")
    (root / "README.txt").write_text("not markdown", encoding="utf-8")
    (root / "ops" / "README.md").write_text("# Our runbooks\n\nIndex.\n", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD.md").write_text("# hidden\n\nx\n", encoding="utf-8")
    (root / "other").mkdir()
    (root / "other" / "cuda-oom.md").write_text("# Same slug\n\nx\n", encoding="utf-8")
    return root


def test_import_reports_each_page_and_writes_loadable_runbooks(tmp_path: Path) -> None:
    source, target = _team_folder(tmp_path / "team"), tmp_path / "corpus"
    report = import_dir(source, target, taken={"bundled-one": "a bundled runbook"})
    assert [(p.slug, p.title, p.failure_class) for p in report.imported] == [
        ("cuda-oom", "GPU ran out of memory", ""),
        ("timeouts", "Upstream timeouts", "grpc_or_timeout"),
    ]
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert reasons["empty.md"] == "field 'body': empty"
    assert reasons["title-only.md"] == "no text besides its title"
    assert "unknown failure class 'oom'" in reasons["bad-class.md"]
    assert "not UTF-8 (byte 0xe9" in reasons["latin.md"]
    assert "already used by" in reasons["cuda-oom.md"] and "CUDA OOM.md" in reasons["cuda-oom.md"]
    assert all(str(source) in s.path for s in report.skipped)
    assert reasons["README.md"].startswith("a README describes its folder")
    assert len(report.skipped) == 6  # README.txt and the hidden folder are not pages
    assert [rb.slug for rb in load_directory(target)] == ["cuda-oom", "timeouts"]


def test_reimport_changes_no_file_and_replace_removes_pages_gone(tmp_path: Path) -> None:
    source, target = _team_folder(tmp_path / "team"), tmp_path / "corpus"
    import_dir(source, target)
    before = {f.name: (f.read_bytes(), f.stat().st_mtime_ns) for f in target.iterdir()}
    assert {p.status for p in import_dir(source, target).imported} == {"unchanged"}
    assert {f.name: (f.read_bytes(), f.stat().st_mtime_ns) for f in target.iterdir()} == before
    (source / "ops" / "gpu" / "CUDA OOM.md").write_text(_PAGE + "\nMore.\n", encoding="utf-8")
    assert [(p.slug, p.status) for p in import_dir(source, target).imported] == [
        ("cuda-oom", "changed"),
        ("timeouts", "unchanged"),
    ]
    (source / "ops" / "timeouts.markdown").unlink()
    assert import_dir(source, target).removed == []
    assert import_dir(source, target, replace=True).removed == ["timeouts"]
    assert sorted(f.name for f in target.iterdir()) == ["cuda-oom.md"]


def test_a_taken_slug_is_skipped_not_overwritten(tmp_path: Path) -> None:
    source = _team_folder(tmp_path / "team")
    report = import_dir(source, tmp_path / "corpus", taken={"cuda-oom": "a bundled runbook"})
    assert "timeouts" in [p.slug for p in report.imported]
    assert any(
        s.reason.endswith("used by a bundled runbook; rename one of them") for s in report.skipped
    )


# --------------------------------------------------------------------------- adversarial

_NAMES = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), min_size=1, max_size=60
).filter(lambda name: name not in (".", ".."))


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=400), name=_NAMES)
def test_any_text_under_any_name_parses_or_fails_naming_the_file(text: str, name: str) -> None:
    source = f"/wiki/{name}.md"
    try:
        rb = parse_runbook(text, source=source)
    except RunbookError as exc:
        assert exc.source == source
        return
    assert rb.slug and len(rb.slug) <= 120 and 0 < len(rb.title) <= 255
    again = parse_runbook(canonical_text(rb), source=f"/corpus/{rb.slug}.md")
    assert (again.slug, again.title, again.failure_class, again.body) == (
        rb.slug,
        rb.title,
        rb.failure_class,
        rb.body,
    )
    chunk_runbook(rb)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pages=st.dictionaries(_NAMES, st.binary(max_size=200), max_size=6))
def test_any_folder_imports_without_raising(tmp_path: Path, pages: dict[str, bytes]) -> None:
    source, target = tmp_path / "in", tmp_path / "out"
    for folder in (source, target):
        if folder.exists():
            for file in folder.iterdir():
                file.unlink()
        folder.mkdir(exist_ok=True)
    for name, data in pages.items():
        try:
            (source / f"{name}.md").write_bytes(data)
        except OSError:  # a name the filesystem refuses (too long in bytes)
            continue
    report = import_dir(source, target)
    written = sorted(f.name for f in source.iterdir() if not f.name.startswith("."))
    assert len(report.imported) + len(report.skipped) == len(written)
    assert sorted(rb.slug for rb in load_directory(target)) == sorted(
        p.slug for p in report.imported
    )
