"""Tests for the bundled runbook corpus and its parser/chunker (rca.corpus.files).

The corpus is graded on unseen incidents of the same kind as the dev set, so besides
structural checks these tests measure how general the signal regexes are: on the dev cases
and on a hand-written list of canonical error messages that are not in the dev set.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rca.corpus.files import (
    Chunk,
    Runbook,
    RunbookError,
    bundled_runbook_dir,
    chunk_runbook,
    corpus_version,
    load_directory,
    match_signals,
    parse_runbook,
    remediation_steps,
)
from rca.corpus.sentences import first_sentence_end, split_sentences
from rca.corpus.step_metadata import StepMetadata, remediation_with_metadata

DEV_CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"

#: The 24 root-cause ids of the failure taxonomy (shared/eval/README.md).
TAXONOMY = (
    "cuda_oom",
    "host_oom",
    "matmul_shape_mismatch",
    "conv_channel_mismatch",
    "checkpoint_shape_mismatch",
    "checkpoint_missing_keys",
    "device_mismatch",
    "dtype_mismatch",
    "nan_loss",
    "seq_too_long",
    "embedding_index_out_of_range",
    "cuda_arch_or_driver",
    "nccl_distributed",
    "dataloader_worker",
    "inplace_autograd",
    "backward_twice",
    "model_file_not_found",
    "tf_input_shape",
    "onnx_export_or_runtime",
    "kv_cache_capacity",
    "quantization_error",
    "grpc_or_timeout",
    "version_incompatibility",
    "mixed_precision_overflow",
)

#: Canonical error lines (not taken from the dev set) and the class they belong to.
CANONICAL_ERRORS: tuple[tuple[str, str], ...] = (
    ("cuda_oom", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
    ("cuda_oom", "RuntimeError: CUDA error: out of memory"),
    ("host_oom", "Killed"),
    ("host_oom", "RuntimeError: DataLoader worker (pid 77) is killed by signal: Killed."),
    ("host_oom", "Last State: Terminated, Reason: OOMKilled, Exit Code: 137"),
    ("matmul_shape_mismatch", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x512)"),
    (
        "conv_channel_mismatch",
        "expected input[4, 4, 64, 64] to have 3 channels, but got 4 channels",
    ),
    ("checkpoint_shape_mismatch", "size mismatch for fc.weight: copying a param with shape [10]"),
    ("checkpoint_missing_keys", 'Unexpected key(s) in state_dict: "module.conv.weight".'),
    (
        "checkpoint_missing_keys",
        "Some weights of BertModel were not initialized from the model checkpoint",
    ),
    ("device_mismatch", "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor)"),
    (
        "device_mismatch",
        "module must have its parameters and buffers on device cuda:0 (device_ids[0])",
    ),
    ("dtype_mismatch", "RuntimeError: expected scalar type Half but found Float"),
    (
        "dtype_mismatch",
        "Expected tensor for argument #1 'indices' to have one of the following scalar",
    ),
    ("dtype_mismatch", "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'"),
    ("nan_loss", "ValueError: loss is nan"),
    ("nan_loss", "RuntimeError: Function 'LogBackward0' returned nan values in its 0th output."),
    ("seq_too_long", "Token indices sequence length is longer than the specified maximum sequence"),
    ("seq_too_long", "ValueError: This model's maximum context length is 4096 tokens."),
    ("embedding_index_out_of_range", "RuntimeError: CUDA error: device-side assert triggered"),
    ("embedding_index_out_of_range", "IndexError: index out of range in self"),
    ("cuda_arch_or_driver", "CUDA error: no kernel image is available for execution on the device"),
    ("cuda_arch_or_driver", "AssertionError: Torch not compiled with CUDA enabled"),
    (
        "nccl_distributed",
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9",
    ),
    ("nccl_distributed", "DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275"),
    (
        "dataloader_worker",
        "RuntimeError: DataLoader worker (pid 123) is killed by signal: Bus error.",
    ),
    ("dataloader_worker", "AttributeError: Can't pickle local object 'build.<locals>.<lambda>'"),
    (
        "inplace_autograd",
        "modified by an inplace operation: [torch.FloatTensor [3]] is at version 1",
    ),
    (
        "inplace_autograd",
        "a leaf Variable that requires grad is being used in an in-place operation.",
    ),
    ("backward_twice", "RuntimeError: Trying to backward through the graph a second time"),
    (
        "model_file_not_found",
        "OSError: ./out does not appear to have a file named pytorch_model.bin",
    ),
    ("model_file_not_found", "_pickle.UnpicklingError: invalid load key, '<'."),
    (
        "model_file_not_found",
        "PytorchStreamReader failed reading zip archive: failed finding central",
    ),
    ("tf_input_shape", 'Input 0 of layer "dense" is incompatible with the layer: expected shape='),
    ("tf_input_shape", "ValueError: Shapes (None, 1) and (None, 5) are incompatible"),
    (
        "onnx_export_or_runtime",
        "INVALID_ARGUMENT : Unexpected input data type. Actual: (tensor(double))",
    ),
    (
        "onnx_export_or_runtime",
        "Specified provider 'CUDAExecutionProvider' is not in available provider",
    ),
    (
        "kv_cache_capacity",
        "larger than the maximum number of tokens that can be stored in KV cache",
    ),
    ("quantization_error", "RuntimeError: CUDA Setup failed despite GPU being available."),
    (
        "quantization_error",
        "Found modules on cpu/disk. Using Exllama backend requires all the modules",
    ),
    ("grpc_or_timeout", "_InactiveRpcError: status = StatusCode.DEADLINE_EXCEEDED"),
    ("grpc_or_timeout", "grpc: received message larger than max (5000000 vs. 4194304)"),
    (
        "version_incompatibility",
        "ImportError: flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9Set",
    ),
    ("version_incompatibility", "Serialization assertion failed. Version tag does not match."),
    (
        "version_incompatibility",
        "TypeError: __init__() got an unexpected keyword argument 'use_auth_token'",
    ),
    ("mixed_precision_overflow", "ValueError: Attempting to unscale FP16 gradients."),
    (
        "mixed_precision_overflow",
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536",
    ),
    ("serving", 'Liveness probe failed: Get "http://10.1.2.3:8000/health": connection refused'),
    ("serving", "sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached"),
    ("serving", "GOAWAY received with error code ENHANCE_YOUR_CALM and debug data too_many_pings"),
)

VALID_RUNBOOK = """---
slug: example-runbook
title: Example failure
failure_class: cuda_oom
frameworks: [pytorch]
signals:
  - 'example failure \\d+'
tags: [example]
---
# Example failure

## Symptoms

- `RuntimeError: example failure 42`

## Diagnosis

Explain the cause.

## Remediation

1. **Do the first thing.** Reason: it works.
2. **Do the second thing.** Reason: it also works.

## Verify

Check it.
"""


@pytest.fixture(scope="module")
def runbooks() -> list[Runbook]:
    return load_directory(bundled_runbook_dir())


def _dev_cases() -> list[dict[str, Any]]:
    with DEV_CASES.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _words(text: str) -> list[str]:
    return text.split()


# --------------------------------------------------------------------------- corpus shape


def test_every_bundled_runbook_parses(runbooks: list[Runbook]) -> None:
    files = sorted(bundled_runbook_dir().glob("*.md"))
    assert len(files) >= 48
    assert len(runbooks) == len(files)
    assert [rb.slug for rb in runbooks] == sorted(rb.slug for rb in runbooks)
    for rb in runbooks:
        assert remediation_steps(rb), rb.slug


def test_every_taxonomy_class_is_covered(runbooks: list[Runbook]) -> None:
    counts = Counter(rb.failure_class for rb in runbooks)
    missing = [cls for cls in TAXONOMY if counts[cls] == 0]
    assert not missing, f"classes without a runbook: {missing}"
    assert counts["serving"] >= 6
    assert set(counts) <= set(TAXONOMY) | {"serving"}


def test_slugs_are_unique_and_match_file_names(runbooks: list[Runbook]) -> None:
    slugs = [rb.slug for rb in runbooks]
    assert len(slugs) == len(set(slugs))
    assert set(slugs) == {path.stem for path in bundled_runbook_dir().glob("*.md")}


def test_every_signal_compiles_and_is_specific(runbooks: list[Runbook]) -> None:
    for rb in runbooks:
        assert rb.signals, rb.slug
        for pattern in rb.signals:
            compiled = re.compile(pattern, re.IGNORECASE)
            assert not compiled.search(""), (rb.slug, pattern)
            assert not compiled.search("RuntimeError: something went wrong"), (rb.slug, pattern)


def test_runbooks_quote_their_own_symptoms(runbooks: list[Runbook]) -> None:
    """Each runbook's signals should recognise at least one error line its Symptoms quote;
    otherwise signals and prose have drifted apart."""
    for rb in runbooks:
        symptoms = next(c.text for c in chunk_runbook(rb, 100_000) if c.section == "Symptoms")
        assert match_signals(rb, symptoms), rb.slug


# --------------------------------------------------------------------------- chunking


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
    (tmp_path / "broken.md").write_text("no front matter", encoding="utf-8")
    with pytest.raises(RunbookError, match="broken.md"):
        load_directory(tmp_path)
    with pytest.raises(RunbookError, match="directory"):
        load_directory(tmp_path / "missing")


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("text", "source", "field"),
    [
        ("# no front matter\n", "", "front matter"),
        ("---\nslug: x\n", "", "front matter"),
        ("---\n- a list\n---\nbody\n", "", "front matter"),
        ("---\nslug: [unclosed\n---\nbody\n", "", "front matter"),
        (VALID_RUNBOOK.replace("slug: example-runbook\n", ""), "", "slug"),
        (VALID_RUNBOOK.replace("slug: example-runbook", "slug: Bad Slug"), "", "slug"),
        (VALID_RUNBOOK, "/tmp/other-name.md", "slug"),
        (VALID_RUNBOOK.replace("title: Example failure\n", ""), "", "title"),
        (
            VALID_RUNBOOK.replace("failure_class: cuda_oom", "failure_class: oom"),
            "",
            "failure_class",
        ),
        (VALID_RUNBOOK.replace("  - 'example failure \\d+'", "  - '(unclosed'"), "", "signals"),
        (VALID_RUNBOOK.replace("  - 'example failure \\d+'", "  - '.*'"), "", "signals"),
        (VALID_RUNBOOK.replace("  - 'example failure \\d+'\n", ""), "", "signals"),
        (VALID_RUNBOOK.replace("frameworks: [pytorch]", "frameworks: pytorch"), "", "frameworks"),
        (VALID_RUNBOOK.replace("tags: [example]", "tags: [example]\nsignal: x"), "", "signal"),
        (VALID_RUNBOOK.replace("## Remediation", "## Fixes"), "", "body"),
        (VALID_RUNBOOK.replace("1. **", "- **").replace("2. **", "- **"), "", "body"),
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


# --------------------------------------------------------------------------- generality


def _hit_rate(runbooks: list[Runbook], items: list[tuple[str, str]]) -> tuple[float, list[str]]:
    misses = []
    for category, text in items:
        if not any(rb.failure_class == category and match_signals(rb, text) for rb in runbooks):
            misses.append(f"{category}: {text[:80]}")
    return 1 - len(misses) / len(items), misses


def test_signals_cover_dev_cases(runbooks: list[Runbook]) -> None:
    cases = _dev_cases()
    assert cases
    items = [(c["category"], f"{c['exception_type']}: {c['message']}") for c in cases]
    rate, misses = _hit_rate(runbooks, items)
    print(f"\ndev-case signal hit rate: {rate:.2%} ({len(items) - len(misses)}/{len(items)})")
    assert rate >= 0.8, misses


def test_signals_cover_canonical_errors(runbooks: list[Runbook]) -> None:
    rate, misses = _hit_rate(runbooks, list(CANONICAL_ERRORS))
    print(f"\ncanonical-error signal hit rate: {rate:.2%}")
    assert rate >= 0.9, misses


def test_no_single_signal_is_tuned_to_one_dev_case(runbooks: list[Runbook]) -> None:
    """Signals must not embed dev-case specifics (ids, paths, exact sizes)."""
    for rb in runbooks:
        for pattern in rb.signals:
            assert not re.search(r"\d{5,}|site-packages|/home/", pattern), (rb.slug, pattern)


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
