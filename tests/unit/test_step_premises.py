"""Step choice by premises: each kind of condition, on real incident texts (dev cases only).

A step whose premise the incident contradicts (``unless`` a fact, ``sets`` an option the
message says is already set, ``api`` of a framework the code does not use) is never the
offline action, and a suggestion restating it fails validation, whoever wrote it.
"""

from __future__ import annotations

from typing import Any

import pytest

from ingest.parsing.frames import make_frame
from ingest.parsing.shapes import extract_shape_diff
from rca.corpus.step_metadata import StepMetadataError, parse_metadata
from rca.suggestion.context import AnalysisContext
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.providers.step_ranking import audit_candidates
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import evidence
from tests.support.frames import USER_FORWARD

#: PyTorch's reducer (torch/csrc/distributed/c10d/reducer.cpp) adds this sentence to the
#: "Expected to have finished reduction" error when the option is already on.
_ALREADY_ON = (
    " Since `find_unused_parameters=True` is enabled, this likely  means that not all"
    " `forward` outputs participate in computing loss."
)


def _ctx(case: dict[str, Any], *ranked: tuple[str, float], **extra: Any) -> AnalysisContext:
    message = extra.pop("message", case["message"])
    return AnalysisContext(
        error_type=case["exception_type"],
        message=message,
        shape_diff=extract_shape_diff(message),
        evidence=evidence(*ranked),
        **extra,
    )


def _draft(action: str, runbook: str) -> Draft:
    return Draft(action, "Because the runbook says so.", runbook, 0.5, "test", "test")


def test_an_option_the_message_says_is_enabled_is_not_suggested_again() -> None:
    case = dev_case("ra001")
    plain = _ctx(case, ("ddp-unused-parameters", 0.9))
    assert "find_unused_parameters" in OfflineProvider().suggest(plain).action

    enabled = _ctx(case, ("ddp-unused-parameters", 0.9), message=case["message"] + _ALREADY_ON)
    assert read_premises(enabled).options_set == {"find_unused_parameters": "True"}
    draft = OfflineProvider().suggest(enabled)
    assert "find_unused_parameters" not in draft.action
    assert validate(draft, enabled).ok
    harmful = _draft("Set `find_unused_parameters=True` in DistributedDataParallel.", draft.runbook)
    check = validate(harmful, enabled)
    assert not check.ok and not check.premises_ok
    assert "already set" in " ".join(check.complaints)
    turning_off = _draft("Set `find_unused_parameters=False` in DDP.", draft.runbook)
    assert validate(turning_off, enabled).premises_ok


def test_stripping_a_prefix_is_not_suggested_when_no_key_differs_by_one() -> None:
    case = dev_case("ra040")  # one unexpected buffer key, nothing missing
    ctx = _ctx(
        case, ("checkpoint-keys-module-prefix", 0.9), ("checkpoint-keys-strict-false-misuse", 0.85)
    )
    assert "state-dict-keys-not-prefixed" in read_premises(ctx).facts
    draft = OfflineProvider().suggest(ctx)
    assert "prefix" not in draft.action.lower()
    strip = _draft(
        'Strip the prefix before loading: `sd = {k.removeprefix("module."): v}`.',
        "checkpoint-keys-module-prefix",
    )
    assert not validate(strip, ctx).premises_ok


def test_stripping_a_prefix_only_some_keys_carry_is_contradicted() -> None:
    keys = ", ".join(f'"layer{i}.weight"' for i in range(6))
    message = (
        "Error(s) in loading state_dict for Net:\n"
        f'Missing key(s) in state_dict: {keys}, "bn.running_mean".\n'
        'Unexpected key(s) in state_dict: "module.bn.running_mean", "head.weight".'
    )
    ctx = _ctx(
        {"exception_type": "RuntimeError", "message": message},
        ("checkpoint-keys-module-prefix", 0.9),
    )
    assert "state-dict-keys-partly-prefixed" in read_premises(ctx).facts
    assert "prefix" not in OfflineProvider().suggest(ctx).action.lower()
    renamed = (
        'Missing key(s) in state_dict: "conv1.weight", "fc.bias".\n'
        'Unexpected key(s) in state_dict: "module.conv1.weight", "module.fc.bias".'
    )
    renamed_ctx = _ctx(
        {"exception_type": "RuntimeError", "message": renamed},
        ("checkpoint-keys-module-prefix", 0.9),
    )
    assert "state-dict-keys-prefixed" in read_premises(renamed_ctx).facts
    assert "prefix" in OfflineProvider().suggest(renamed_ctx).action.lower()


def test_a_small_allocation_on_a_device_held_elsewhere_is_not_told_to_shrink_the_batch() -> None:
    case = dev_case("ra059")  # 2 MiB failed on a 47.5 GiB GPU where PyTorch holds 686 MiB
    ctx = _ctx(
        case,
        ("cuda-oom-inference", 0.9),
        ("cuda-oom-training", 0.88),
        ("cuda-oom-fragmentation", 0.86),
    )
    facts = read_premises(ctx).facts
    assert "memory-held-elsewhere" in facts and "memory-not-fragmented" not in facts
    draft = OfflineProvider().suggest(ctx)
    assert "batch size" not in draft.action.lower()
    shrink = _draft(
        "Reduce the inference batch size or cap the sequence length.", "cuda-oom-inference"
    )
    assert not validate(shrink, ctx).premises_ok


def test_allocation_smaller_than_free_memory_is_read_from_the_message() -> None:
    message = (
        "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity;"
        " 2.10 GiB already allocated; 3.25 GiB free; 4.30 GiB reserved in total by PyTorch)"
    )
    facts = read_premises(_ctx({"exception_type": "RuntimeError", "message": message})).facts
    assert {"allocation-fits-free", "memory-fragmented"} <= facts
    assert "memory-held-elsewhere" not in facts


def test_pytorch_steps_are_not_offered_for_a_tensorflow_oom() -> None:
    case = dev_case("ra010")  # ResourceExhaustedError from a TensorFlow training run
    ctx = _ctx(case, ("cuda-oom-training", 0.9), ("cuda-oom-fragmentation", 0.8))
    assert read_premises(ctx).frameworks == {"tensorflow"}
    draft = OfflineProvider().suggest(ctx)
    assert "torch" not in draft.action.lower()
    torch_step = _draft(
        "Accumulate metrics with `loss.item()` and run evaluation under `torch.no_grad()`.",
        "cuda-oom-training",
    )
    assert not validate(torch_step, ctx).premises_ok


def test_in_features_is_not_changed_on_a_pretrained_layer() -> None:
    case = dev_case("c014")  # mat1 and mat2 shapes cannot be multiplied (256x4096 and 768x320)
    loads = make_frame(
        "/app/pipe.py", "load", 12, context_line="unet = UNet.from_pretrained(path)", in_app=True
    )
    fresh = _ctx(case, ("matmul-shape-mismatch-linear", 0.9), frames=USER_FORWARD)
    pretrained = _ctx(case, ("matmul-shape-mismatch-linear", 0.9), frames=[loads])
    assert "in_features" in OfflineProvider().suggest(fresh).action
    assert "layer-pretrained" in read_premises(pretrained).facts
    assert "in_features" not in OfflineProvider().suggest(pretrained).action


def test_the_in_features_step_names_the_incidents_width_not_a_template() -> None:
    ctx = _ctx(dev_case("c014"), ("matmul-shape-mismatch-linear", 0.9), frames=USER_FORWARD)
    draft = OfflineProvider().suggest(ctx)
    assert "(4096)" in draft.action and "K1" not in draft.action
    left = _draft(
        "Set the layer's `in_features` to the actual flattened size (the K1 in the message).",
        draft.runbook,
    )
    check = validate(left, ctx)
    assert not check.placeholders_ok and not check.ok


def test_candidates_are_audited_before_the_filter() -> None:
    """The unfiltered pass rate is a measurement, not 1.0 by construction."""
    case = dev_case("ra059")
    ctx = _ctx(
        case,
        ("cuda-oom-inference", 0.9),
        ("cuda-oom-training", 0.88),
        ("cuda-oom-fragmentation", 0.86),
    )
    audit = audit_candidates(ctx)
    assert audit.steps >= 6 and audit.premise_contradicted >= 1
    assert audit.valid < audit.steps


@pytest.mark.parametrize(
    ("line", "field"),
    [("{sets: [find unused]}", "sets"), ("{api: [cobol]}", "api"), ("{unless: [sunny]}", "unless")],
)
def test_a_bad_condition_fails_at_load_naming_its_field(line: str, field: str) -> None:
    with pytest.raises(StepMetadataError, match=field):
        parse_metadata(line)
