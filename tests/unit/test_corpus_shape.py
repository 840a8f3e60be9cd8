"""The bundled runbook corpus: every runbook parses, each taxonomy class is covered, slugs
match file names, and each signal compiles, is specific and matches its own symptoms."""

from __future__ import annotations

import re
from collections import Counter

from rca.corpus.files import (
    FAILURE_CLASSES,
    Runbook,
    bundled_runbook_dir,
    chunk_runbook,
    match_signals,
    remediation_steps,
)

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
    assert set(counts) <= FAILURE_CLASSES


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
