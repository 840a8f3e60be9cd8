"""`manage.py runbooks import DIR`: a team's plain Markdown is stored, embedded, found by
retrieval, suggested from by the offline provider, survives the `runbooks load` every
`make run` does, and `rca eval` scores it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from rca.corpus.embeddings import embed
from rca.corpus.files import RunbookError, bundled_runbook_dir
from rca.evaluation.run import case_incident
from rca.models import Runbook
from rca.retrieval.hybrid import search
from rca.retrieval.signals import build_signals
from rca.suggestion.evidence import context_for, evidence_from_retrieved, stored_bodies
from rca.suggestion.providers import OfflineProvider

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"


def _team_wiki(root: Path) -> Path:
    (root / "gpu").mkdir(parents=True)
    (root / "gpu" / "Out of memory on the GPU.md").write_text(
        "# Training dies with CUDA out of memory\n\n"
        "The allocator could not find room for a tensor on the device.\n\n"
        "## What we do\n\n1. Halve the per-device batch size and use gradient accumulation.\n",
        encoding="utf-8",
    )
    (root / "serving").mkdir()
    (root / "serving" / "deadline.md").write_text(
        "---\ntags: [grpc]\n---\nModel server calls fail with DEADLINE_EXCEEDED\n"
        "=================================================\n\n"
        "Calls wait on a busy model server.\n\n## Fix\n\n"
        "1. Raise the client deadline above the p99 latency of the model.\n",
        encoding="utf-8",
    )
    (root / "serving" / "shapes.md").write_text(
        "### mat1 and mat2 shapes cannot be multiplied\n\n"
        "The Linear layer's in_features differs from the last dimension of its input.\n",
        encoding="utf-8",
    )
    (root / "legacy.md").write_bytes("# Ancien runbook\n\nMémoire.\n".encode("latin-1"))
    (root / "blank.md").write_bytes(b"\n\n")
    return root


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_imported_plain_markdown_is_stored_found_and_kept(tmp_path: Path, settings) -> None:
    settings.RCA_BUNDLED_RUNBOOKS = False
    settings.RCA_RUNBOOK_DIR = str(tmp_path / "imported")
    Runbook.objects.all().delete()  # a team's first import: no corpus stored before (an
    # earlier test of the session may have committed the bundled one)
    wiki = _team_wiki(tmp_path / "wiki")

    output = _run("runbooks", "import", str(wiki), "--embed-now")
    assert "3 imported, 2 skipped" in output
    assert f"imported {wiki / 'serving' / 'deadline.md'} -> deadline (new; " in output
    assert f"skipped  {wiki / 'legacy.md'}: field 'encoding': not UTF-8" in output
    assert f"skipped  {wiki / 'blank.md'}: field 'body': empty" in output
    assert "runbooks: 3 created, 0 updated, 0 unchanged, 0 removed" in output
    stored = {rb.slug: rb.title for rb in Runbook.objects.all()}
    assert stored == {
        "out-of-memory-on-the-gpu": "Training dies with CUDA out of memory",
        "deadline": "Model server calls fail with DEADLINE_EXCEEDED",
        "shapes": "mat1 and mat2 shapes cannot be multiplied",
    }

    incident = case_incident(
        {
            "exception_type": "grpc.RpcError",
            "message": "StatusCode.DEADLINE_EXCEEDED: Deadline Exceeded calling Predict",
        }
    )
    signals = build_signals(incident)
    found = search(signals, embed([signals.embedding_text()])[0], k=3)
    assert found[0].slug == "deadline" and found[0].failure_class == ""
    evidence = evidence_from_retrieved(found, stored_bodies([r.slug for r in found]))
    draft = OfflineProvider().suggest(context_for(incident, evidence))
    assert draft.runbook == "deadline" and "Raise the client deadline" in draft.action

    again = _run("runbooks", "import", str(wiki))
    assert "runbooks: 0 created, 0 updated, 3 unchanged, 0 removed" in again
    restart = _run("runbooks", "load")  # what `make run` does at every start
    assert "0 created, 0 updated, 3 unchanged, 0 removed" in restart


def test_import_of_a_missing_folder_is_a_clear_error(tmp_path: Path, settings) -> None:
    settings.RCA_RUNBOOK_DIR = str(tmp_path / "imported")
    with pytest.raises(CommandError, match="nowhere: field 'directory': not a directory"):
        _run("runbooks", "import", str(tmp_path / "nowhere"))


def test_rca_eval_scores_a_corpus_without_signals(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "oom.md").write_text(
        "---\nfailure_class: cuda_oom\n---\n# CUDA out of memory\n\nLower the batch size.\n",
        encoding="utf-8",
    )
    (corpus / "shapes.md").write_text(
        "---\nfailure_class: matmul_shape_mismatch\nsignals: ['mat1 and mat2 shapes']\n---\n"
        "# mat1 and mat2 shapes cannot be multiplied\n\nFix the Linear in_features.\n",
        encoding="utf-8",
    )
    args = ("rca", "eval", str(DEV_CASES), "--corpus", str(corpus), "--json", "--mode", "bm25")
    plain = json.loads(_run(*args, "--ignore-signals"))
    assert plain["runbooks"] == 2 and plain["runs"]["bm25"]["cases"] == 30
    with pytest.raises(CommandError, match="needs --corpus"):
        _run("rca", "eval", str(DEV_CASES), "--ignore-signals")


def test_an_imported_slug_that_is_also_bundled_fails_the_load_naming_it(
    tmp_path: Path, settings
) -> None:
    from rca.corpus.store import configured_runbooks

    settings.RCA_RUNBOOK_DIR = str(tmp_path)
    settings.RCA_BUNDLED_RUNBOOKS = True
    bundled = sorted(p.stem for p in bundled_runbook_dir().glob("*.md"))[0]
    (tmp_path / f"{bundled}.md").write_text("# Ours\n\ntext\n", encoding="utf-8")
    with pytest.raises(RunbookError, match=f"'{bundled}' is also bundled"):
        configured_runbooks()
    settings.RCA_BUNDLED_RUNBOOKS = False
    assert [rb.slug for rb in configured_runbooks()] == [bundled]
