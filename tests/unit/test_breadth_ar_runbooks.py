"""Failure kinds of the breadth batch on training jobs at scale (eval/realworld/cases-ar.jsonl)
route to the steps written for them from their libraries' documentation (issue 16).

cases-ar found no runbook for most of its kinds: WebDataset's missing node splitter, Lightning
hanging at "Initializing distributed" (SLURM tasks, leftover launcher variables), JAX's
multi-host start-up, the Trainer's `max_steps` for streamed datasets, the datasets cache on a
full or lock-less disk, Megatron's layers-per-stage assertion, `DistributedSampler.set_epoch`,
Lightning's Trainer flags under manual optimization, a tracker failing the job at init and
TensorFlow's `TF_CONFIG`; two existing runbooks gained a step or a quoted condition (c10d
store names that do not resolve, the DeepSpeed launcher's ssh check). Each wording is sent as a
bare incident through lexical retrieval and the offline provider: the runbook comes first and
its action names the documented fix. Errors of other kinds must not match the new signals.
"""

from __future__ import annotations

from rca.corpus.files import match_signals
from rca.retrieval.signal_needs import incident_terms
from tests.support.evidence import bundled_runbooks
from tests.support.vendor_checks import Wording, batch_tests

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "webdataset-multinode-nodesplitter",
        "ValueError",
        "ValueError: you need to add an explicit nodesplitter to your input pipeline for"
        " multi-node training",
        ("split_by_node",),
    ),
    Wording(
        "trainer-iterable-dataset-max-steps",
        "ValueError",
        "ValueError: train_dataset does not implement __len__, max_steps has to be specified",
        ("max_steps",),
    ),
    Wording(
        "datasets-cache-disk-and-locks",
        "OSError",
        "OSError: [Errno 37] No locks available",
        ("local disk",),
    ),
    Wording(
        "megatron-pipeline-layers-divisible",
        "AssertionError",
        "AssertionError: num_layers should be divisible by pipeline_model_parallel_size",
        ("num_layers_in_first_pipeline_stage",),
    ),
    Wording(
        "lightning-manual-optimization-trainer-flags",
        "MisconfigurationException",
        "MisconfigurationException: Automatic gradient clipping is not supported for manual"
        " optimization. Remove `Trainer(gradient_clip_val=5.0)` or switch to automatic"
        " optimization.",
        ("automatic optimization",),
    ),
    Wording(
        "experiment-tracker-distributed-init",
        "Exception",
        "wandb: ERROR Error communicating with wandb process",
        ("offline",),
    ),
    Wording(
        "distributed-rendezvous-init",
        "RendezvousConnectionError",
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to"
        " the C10d store has failed. See inner exception for details.",
        ("/etc/hosts",),
    ),
    Wording(
        "deepspeed-multinode-hostfile-ssh",
        "RuntimeError",
        "RuntimeError: Using hostfile at /job/hostfile but host=worker-1 was not reachable via"
        " ssh. If you are running with a single node please remove /job/hostfile or setup"
        " passwordless ssh.",
        ("passwordless ssh",),
    ),
)

#: slug -> errors of other kinds that the runbook's signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "webdataset-multinode-nodesplitter": (
        "ValueError: num_samples should be a positive integer value, but got num_samples=0",
    ),
    "lightning-ddp-init-hang": (
        "MisconfigurationException: `Trainer(strategy='ddp')` is not compatible with an"
        " interactive environment.",
    ),
    "jax-multihost-initialize-hang": (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying"
        " to allocate 17179869184 bytes.",
    ),
    "trainer-iterable-dataset-max-steps": (
        "TypeError: object of type 'IterableDataset' has no len()",
    ),
    "datasets-cache-disk-and-locks": (
        "OSError: [Errno 24] Too many open files: '/data/shards/part-00017.arrow'",
    ),
    "megatron-pipeline-layers-divisible": ("AssertionError: 25 is not divisible by 4",),
    "distributed-sampler-set-epoch": (
        "RuntimeError: Default process group has not been initialized, please make sure to"
        " call init_process_group.",
    ),
    "lightning-manual-optimization-trainer-flags": (
        "MisconfigurationException: Do not set `gradient_accumulation_steps` in the DeepSpeed"
        " config as this will be set with the `accumulate_grad_batches` argument passed via"
        " the Lightning Trainer.",
    ),
    "experiment-tracker-distributed-init": (
        "mlflow.exceptions.MlflowException: INVALID_PARAMETER_VALUE: Changing param values is"
        " not allowed.",
    ),
    "tf-multiworker-tf-config": (
        "ValueError: Variable was not created in the distribution strategy scope of"
        " (<tensorflow.python.distribute.mirrored_strategy.MirroredStrategy object>).",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)


def test_generic_messages_count_only_with_their_setting() -> None:
    """`DEADLINE_EXCEEDED` and `No space left on device` are printed by many programs; the
    new runbooks' signals for them count only when the incident names JAX or `datasets`."""
    runbooks = bundled_runbooks()
    cases = (
        (
            "jax-multihost-initialize-hang",
            "StatusCode.DEADLINE_EXCEEDED calling the model server",
            "jax.distributed.initialize: DEADLINE_EXCEEDED: Deadline Exceeded",
        ),
        (
            "datasets-cache-disk-and-locks",
            "OSError: [Errno 28] No space left on device: '/tmp/x'",
            'File "/site-packages/datasets/arrow_writer.py" OSError: No space left on device',
        ),
    )
    for slug, other, own in cases:
        rb = runbooks[slug]
        assert not match_signals(rb, other, incident_terms({"message": other})), slug
        assert match_signals(rb, own, incident_terms({"message": own})), slug
