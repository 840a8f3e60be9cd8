"""What a runbook is once parsed: the :class:`Runbook` record, its error, and the fixed vocabulary.

Shared by the parser (:mod:`.files`), the chunker (:mod:`.chunking`) and everything above
the corpus, so that none of them needs another's internals.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAILURE_CLASSES", "REQUIRED_SECTIONS", "Runbook", "RunbookError"]

#: Root-cause ids of the failure taxonomy (shared/eval/README.md), ``serving`` for
#: inference-serving failures (probes, pools, queues, caches, retrieval) outside it, and
#: the kinds the real-world set names beyond the taxonomy (eval/realworld/README.md).
FAILURE_CLASSES: frozenset[str] = frozenset(
    {
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
        "serving",
        "adapter_config",
        "cuda_library_mismatch",
        "cuda_fork_multiprocessing",
        "cuda_toolkit_missing",
        "cudnn_init_memory",
        "custom_object_deserialization",
        "data_pipeline_exhausted",
        "dataset_preprocessing",
        "deepspeed_config",
        "engine_build_config",
        "engine_version_mismatch",
        "fsdp_config",
        "fsdp_checkpoint",
        "gpu_memory_preallocation",
        "gpu_not_used",
        "graph_capture_limit",
        "jax_immutable_array",
        "jax_x64_precision",
        "keras_tf_keras_mix",
        "label_out_of_range",
        "missing_kernel_extension",
        "model_file_format",
        "no_gradients",
        "non_strict_checkpoint_load",
        "parallel_config",
        "safe_to_ignore_warning",
        "server_model_config",
        "serving_config",
        "shared_gpu_memory",
        "shared_memory_ipc",
        "tokenizer_config",
        "unsupported_model_format",
        "unsupported_operator",
        "zero3_checkpoint",
        "zero_no_sync",
        "backward_non_scalar",
        "batch_statistics",
        "determinism_config",
        "device_index_invalid",
        "tensor_conversion",
        "tensor_layout",
        "message_named_remedy",
        # Kinds the premises set (eval/realworld/cases-w.jsonl) names. The first two have
        # runbooks of exactly that scope (pickle-protocol-unsupported; the bf16 ones for
        # training and for serving). The last three are finer names for kinds other cases
        # label checkpoint_missing_keys, checkpoint_shape_mismatch and zero3_checkpoint;
        # those runbooks keep their classes, and a team's own page may use either id.
        "serialization_format_version",
        "dtype_unsupported_by_gpu",
        "checkpoint_key_prefix",
        "checkpoint_head_size",
        "checkpoint_partitioned_weights",
    }
)

#: The sections of our runbook format. Optional (a team's own page loads without them), but
#: the offline provider suggests only numbered steps under ``## Remediation``.
REQUIRED_SECTIONS: tuple[str, ...] = ("Symptoms", "Diagnosis", "Remediation", "Verify")


class RunbookError(ValueError):
    """A runbook file is malformed; the message names the file and the offending field."""

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source = source or "<string>"
        self.field = field
        self.problem = problem
        super().__init__(f"{self.source}: field '{field}': {problem}")


@dataclass(frozen=True)
class Runbook:
    """One parsed runbook. ``body`` is the Markdown after the front matter.

    ``checksum`` is the sha256 of the whole file (newlines normalised), so any edit to the
    front matter or the body changes the corpus version. ``failure_class`` is "" when the
    file names none; ``signals``, ``frameworks`` and ``tags`` are then empty too.
    """

    slug: str
    title: str
    failure_class: str
    frameworks: tuple[str, ...]
    signals: tuple[str, ...]
    tags: tuple[str, ...]
    body: str
    checksum: str
    sources: tuple[str, ...] = ()  # where the knowledge comes from (URLs); not ranked on
    #: Per signal (same order as ``signals``, or empty when none has any): the names the
    #: incident must show for it to count (``needs``, :mod:`rca.retrieval.signal_needs`).
    signal_needs: tuple[tuple[str, ...], ...] = ()

    def signal_entries(self) -> list[str | dict[str, object]]:
        """The signals as front matter writes them (and the database stores them): a regex,
        or ``{regex, needs}`` for one that needs a setting."""
        needs = self.signal_needs or tuple(() for _ in self.signals)
        return [
            {"regex": regex, "needs": list(names)} if names else regex
            for regex, names in zip(self.signals, needs, strict=True)
        ]
