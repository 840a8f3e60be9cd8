"""The offline provider picks the step that fits the incident: the frames, figures and
shapes it shows, the top class only, and a runbook's own Applies line."""

from __future__ import annotations

import pytest

from ingest.parsing.frames import Frame, make_frame
from ingest.parsing.logs import parse_logs
from ingest.parsing.shapes import ShapeDiff, extract_shape_diff
from rca.suggestion.context import AnalysisContext, evidence_from_runbook
from rca.suggestion.providers import (
    OfflineProvider,
)
from rca.suggestion.validation import validate
from tests.support.evidence import evidence as _evidence

_OOM = (
    "CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 23.65 GiB"
    " of which 1.02 GiB is free. Of the allocated memory 21.87 GiB is allocated by PyTorch,"
    " and 187.45 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory"
    " is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid"
    " fragmentation."
)
_OOM_RUNBOOKS = (
    ("cuda-oom-fragmentation", 1.5),
    ("cuda-oom-inference", 1.3),
    ("cuda-oom-training", 1.25),
)


def _frame(filename: str, function: str, line: str, in_app: bool = True) -> Frame:
    return make_frame(filename, function, 10, context_line=line, in_app=in_app)


def test_offline_picks_a_training_fix_for_an_oom_raised_in_backward() -> None:
    """The message's own advice (expandable segments) does not fit: hardly any reserved
    memory is unallocated, and the frames show a training step."""
    ctx = AnalysisContext(
        error_type="torch.cuda.OutOfMemoryError",
        message=_OOM,
        frames=[
            _frame("/srv/exp/train.py", "train_epoch", "loss.backward()"),
            _frame(
                "/venv/site-packages/torch/_tensor.py",
                "backward",
                "torch.autograd.backward(",
                False,
            ),
        ],
        evidence=_evidence(*_OOM_RUNBOOKS),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "cuda-oom-training"
    assert "fragmentation" not in draft.reason
    assert validate(draft, ctx).ok


def test_offline_picks_a_serving_fix_for_the_same_oom_raised_in_a_request_handler() -> None:
    ctx = AnalysisContext(
        error_type="torch.cuda.OutOfMemoryError",
        message=_OOM,
        frames=[
            _frame("/srv/api/server.py", "handle_request", "out = model.generate(**inputs)"),
            _frame("/venv/site-packages/transformers/generation/utils.py", "generate", "", False),
        ],
        inference_context={"model_id": "llama-3-8b", "batch_size": 8},
        evidence=_evidence(*_OOM_RUNBOOKS),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "cuda-oom-inference"
    assert validate(draft, ctx).ok


def test_offline_keeps_the_fragmentation_fix_when_the_figures_show_fragmentation() -> None:
    message = _OOM.replace("187.45 MiB is reserved", "9.20 GiB is reserved")
    ctx = AnalysisContext(
        error_type="torch.cuda.OutOfMemoryError",
        message=message,
        evidence=_evidence(*_OOM_RUNBOOKS),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "cuda-oom-fragmentation"
    assert "expandable_segments" in draft.action


def test_offline_permutes_a_channels_last_batch_even_below_the_grayscale_runbook() -> None:
    """224 "channels" where 3 are needed and the last axis is 3: an NHWC batch, not a
    grayscale image; the axis indices in the runbook's example are dropped to validate."""
    message = (
        "Given groups=1, weight of size [32, 3, 3, 3], expected input[16, 224, 224, 3] to have"
        " 3 channels, but got 224 channels instead"
    )
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message=message,
        shape_diff=extract_shape_diff(message),
        evidence=_evidence(
            ("conv-channel-mismatch-grayscale-rgba", 1.5),
            ("conv-channel-mismatch-layout", 1.45),
        ),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "conv-channel-mismatch-layout"
    assert draft.action.startswith("Permute")
    assert validate(draft, ctx).ok


def test_offline_adds_the_batch_axis_when_the_shapes_say_it_is_missing() -> None:
    ctx = AnalysisContext(
        error_type="ValueError",
        message="Input 0 of layer model is incompatible with the layer",
        shape_diff=[
            ShapeDiff(tensor="input_1", op="input", expected=[None, 64, 3], actual=[64, 3])
        ],
        evidence=_evidence(("tf-input-shape-batch-dim", 1.0)),
    )
    draft = OfflineProvider().suggest(ctx)
    assert "batch axis" in draft.action
    ctx.shape_diff = [
        ShapeDiff(tensor="input_1", op="input", expected=[None, 64, 3], actual=[None, 64])
    ]
    assert "feature/channel axis" in OfflineProvider().suggest(ctx).action


def test_offline_strips_the_prefix_the_state_dict_keys_show() -> None:
    message = (
        "Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "conv1.weight", "fc.bias".\n'
        '\tUnexpected key(s) in state_dict: "_orig_mod.conv1.weight", "_orig_mod.fc.bias".'
    )
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message=message,
        logs=parse_logs(["checkpoint written by train.py --compile"]),
        evidence=_evidence(("checkpoint-keys-module-prefix", 1.0)),
    )
    assert OfflineProvider().suggest(ctx).action.startswith("Strip the prefix")


def test_offline_considers_only_runbooks_of_the_top_class_ranked_nearly_as_high() -> None:
    serialization = "/usr/lib/python3/site-packages/torch/serialization.py"
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message="Attempting to deserialize object on a CUDA device but"
        " torch.cuda.is_available() is False.",
        frames=[
            _frame("/app/worker.py", "<module>", 'state = torch.load("model.pt")'),
            _frame(serialization, "load", "return _load(opened_zipfile,", False),
            _frame(
                serialization, "_cuda_deserialize", "device = validate_cuda_device(location)", False
            ),
        ],
        evidence=_evidence(
            ("device-mismatch-dataparallel", 1.5),
            ("cuda-not-available-cpu-build", 1.45),  # another class: never cited
            ("device-mismatch-inputs-not-moved", 0.6),  # same class, far below: not a candidate
        ),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "device-mismatch-dataparallel"
    assert "map_location" in draft.action  # the fix for the user's own torch.load call


_OLD_OOM = (
    "CUDA out of memory. Tried to allocate 500.00 MiB (GPU 0; 23.69 GiB total capacity;"
    " 22.91 GiB already allocated; 218.56 MiB free; 22.92 GiB reserved in total by PyTorch)"
)


def test_offline_does_not_offer_another_frameworks_step() -> None:
    """A transformers server's OOM while loading: the diffusers step (half precision and
    offload, which fits the loading) is not for it."""
    ctx = AnalysisContext(
        error_type="torch.cuda.OutOfMemoryError",
        message=_OLD_OOM,
        frames=[
            _frame(
                "/srv/chat/server.py", "load", "model = AutoModelForCausalLM.from_pretrained(n)"
            ),
            _frame("/srv/.venv/site-packages/transformers/modeling_utils.py", "to", "x", False),
        ],
        evidence=_evidence(("cuda-oom-diffusers-pipeline", 1.4), ("cuda-oom-inference", 1.35)),
    )
    draft = OfflineProvider().suggest(ctx)
    assert "diffusers" not in draft.action, draft.action


_OWN_RUNBOOK = """---
slug: team-oom
title: Our GPU ran out of memory
failure_class: cuda_oom
signals: ['CUDA out of memory']
---
# Our GPU ran out of memory

## Symptoms

- `CUDA out of memory`

## Diagnosis

Check the allocator figures.

## Remediation

1. **Set the allocator to grow its segments.** Reason: it recombines freed blocks.{applies}
2. **Reduce the batch size.** Reason: activations scale with the batch.

## Verify

It runs.
"""


@pytest.mark.parametrize(
    ("applies", "expected"),
    [
        ("", "Set the allocator to grow its segments."),
        ("\n   Applies: {unless: [memory-not-fragmented]}", "Reduce the batch size."),
    ],
)
def test_a_users_runbook_steers_the_offline_step_with_its_applies_line(
    applies: str, expected: str
) -> None:
    """Without metadata the runbook's first step wins; with it, the incident's figures (memory
    really allocated) rule that step out, and no code names either step."""
    from rca.corpus.files import parse_runbook

    runbook = parse_runbook(_OWN_RUNBOOK.replace("{applies}", applies))
    ctx = AnalysisContext(
        error_type="torch.OutOfMemoryError",
        message=_OOM,
        evidence=[evidence_from_runbook(runbook, 1.0)],
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.action == expected
    assert validate(draft, ctx).ok
