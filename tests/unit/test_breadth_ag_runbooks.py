"""Failure kinds of the fourth breadth batch route to runbooks written for them (issue 16).

Each kind below is one a user of any project hits: torch.hub's GitHub API check running into
the rate limit, Windows' page file exhausted by DataLoader workers, a second TensorBoard
install, a Hub dataset whose recorded split sizes are stale, ONNX Runtime's TensorRT execution
provider short of workspace, a model config in a format a newer transformers introduced, the
TensorRT parser refusing a Gather on a shape tensor, an add-on defaulting to standalone keras,
and an OpenAI-style request whose completion budget fills the context. For each, several
wordings (as the libraries print them, not a case's) are sent as bare incidents through
lexical retrieval and the offline provider: the runbook comes first and the action names the
fix. Look-alike errors of other kinds must not match the new signals.

A name a release removed (``prepare_model_for_int8_training``, PEFT 0.10) must not be
answered with "upgrade to a release that has it": the release notes, kept as data in
``rca/knowledge/compatibility/api-changes``, give the direction and the replacement.
"""

from __future__ import annotations

import pytest

from rca.corpus.files import Runbook, match_signals
from rca.retrieval.hybrid import Retrieved
from rca.suggestion.context import AnalysisContext
from rca.suggestion.providers import Draft
from rca.suggestion.validation import validate
from tests.support.evidence import bundled_runbooks
from tests.support.vendor_checks import (
    check_routes,
)
from tests.support.vendor_routing import route_incident, route_message

#: slug -> (error type, message) wordings of the kind.
WORDINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "torch-hub-github-rate-limit": (
        ("HTTPError", "urllib.error.HTTPError: HTTP Error 403: rate limit exceeded"),
        (
            "HTTPError",
            'File "/opt/venv/lib/python3.10/site-packages/torch/hub.py", line 137, in'
            " _validate_not_a_forked_repo\n    with urlopen(url) as r:\nHTTPError: HTTP Error"
            " 403: rate limit exceeded",
        ),
    ),
    "windows-page-file-dataloader-workers": (
        (
            "OSError",
            "[WinError 1455] The paging file is too small for this operation to complete."
            ' Error loading "C:\\envs\\train\\lib\\site-packages\\torch\\lib\\'
            'cudnn_cnn_infer64_8.dll" or one of its dependencies.',
        ),
        (
            "OSError",
            "The paging file is too small for this operation to complete. (os error 1455)",
        ),
    ),
    "tensorboard-duplicate-install": (
        ("ValueError", "ValueError: Duplicate plugins for name projector"),
        ("ValueError", "Duplicate plugins for name whatif"),
    ),
    "datasets-split-sizes-verification": (
        (
            "NonMatchingSplitsSizesError",
            "datasets.utils.info_utils.NonMatchingSplitsSizesError: [{'expected':"
            " SplitInfo(name='train', num_bytes=52000, num_examples=400, shard_lengths=None,"
            " dataset_name=None), 'recorded': SplitInfo(name='train', num_bytes=48000,"
            " num_examples=370, shard_lengths=None, dataset_name='reviews')}]",
        ),
        (
            "NonMatchingChecksumError",
            "datasets.utils.info_utils.NonMatchingChecksumError: Checksums didn't match for"
            " dataset source files: ['https://example.org/corpus/train.zip']",
        ),
    ),
    "onnxruntime-tensorrt-ep-workspace": (
        (
            "none (ONNX Runtime error log)",
            "[E:onnxruntime:Default, tensorrt_execution_provider.h:58 log] [2023-05-02"
            " 08:10:11 ERROR] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda"
            " Runtime (out of memory)",
        ),
        (
            "Fail",
            "[ONNXRuntimeError] : 1 : FAIL : TensorRT EP failed to create engine from network"
            " for fused node: TensorrtExecutionProvider_TRTKernel_graph_main_1052_0",
        ),
    ),
    "transformers-unrecognized-model-type": (
        (
            "ValueError",
            "`rope_scaling` must be a dictionary with two fields, `type` and `factor`, got"
            " {'factor': 32.0, 'high_freq_factor': 4.0, 'low_freq_factor': 1.0,"
            " 'original_max_position_embeddings': 8192, 'rope_type': 'llama3'}",
        ),
        (
            "ValueError",
            "`rope_scaling` must be a dictionary with with two fields, `name` and `factor`,"
            " got {'factor': 2.0, 'rope_type': 'yarn', 'original_max_position_embeddings':"
            " 4096}",
        ),
    ),
    "tensorrt-onnx-parser-unsupported-op": (
        (
            "none (TensorRT parser error)",
            "[8] Assertion failed: !(data->getType() == nvinfer1::DataType::kINT32 && nbDims =="
            ' 1 && inputs.at(0).is_tensor()) && "Cannot perform gather on a shape tensor!"',
        ),
        (
            "none (TensorRT parser error)",
            "ERROR: builtin_op_importers.cpp:1045 In function importGather: [8] Assertion"
            ' failed: "Cannot perform gather on a shape tensor!"',
        ),
    ),
    "datasets-fsspec-glob-pattern": (
        ("ValueError", "ValueError: Invalid pattern: '**' can only be an entire path component"),
        (
            "ValueError",
            'File "/opt/conda/lib/python3.10/site-packages/fsspec/utils.py", line 640, in'
            " glob_translate\n    raise ValueError(\nValueError: Invalid pattern: '**' can only"
            " be an entire path component",
        ),
    ),
    "seq-too-long-position-embeddings": (
        (
            "BadRequestError",
            "Error code: 400 - {'object': 'error', 'message': \"This model's maximum context"
            " length is 4096 tokens. However, you requested 4400 tokens (304 in the messages,"
            " 4096 in the completion). Please reduce the length of the messages or"
            " completion.\", 'type': 'BadRequestError', 'code': 400}",
        ),
    ),
}

#: slug -> words the suggested action must contain.
ACTION_TERMS: dict[str, tuple[str, ...]] = {
    "torch-hub-github-rate-limit": ("skip_validation", "GITHUB_TOKEN"),
    "windows-page-file-dataloader-workers": ("num_workers",),
    "tensorboard-duplicate-install": ("uninstall", "dist-info"),
    "datasets-split-sizes-verification": ("--save_info",),
    "onnxruntime-tensorrt-ep-workspace": ("trt_max_workspace_size",),
    "transformers-unrecognized-model-type": ("Upgrade transformers",),
    "tensorrt-onnx-parser-unsupported-op": ("onnx-simplifier",),
    "datasets-fsspec-glob-pattern": ("Upgrade datasets",),
    "seq-too-long-position-embeddings": ("max_tokens",),
}

#: slug -> errors of other kinds its new signals must not match.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "torch-hub-github-rate-limit": (
        "429 Client Error: Too Many Requests for url: https://huggingface.co/api/models/org/m",
        "urllib.error.HTTPError: HTTP Error 403: Forbidden",
    ),
    "windows-page-file-dataloader-workers": (
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.",
        '[WinError 126] The specified module could not be found. Error loading "c10.dll"',
    ),
    "tensorboard-duplicate-install": (
        "ValueError: Duplicate node name in graph: 'dense/kernel'",
        "WARNING: Ignoring invalid distribution specifier",
    ),
    "datasets-split-sizes-verification": (
        "FileNotFoundError: Couldn't find a dataset script at /data/reviews/reviews.py",
        "ValueError: Unknown split \"validation\". Should be one of ['train', 'test'].",
    ),
    "onnxruntime-tensorrt-ep-workspace": (
        "BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size"
        " 1073741824",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    ),
    "transformers-unrecognized-model-type": (
        "ValueError: `rope_theta` must be a float",
        "Token indices sequence length is longer than the specified maximum sequence length",
    ),
    "tensorrt-onnx-parser-unsupported-op": ("[8] Assertion failed: axis >= 0 && axis < nbDims",),
    "seq-too-long-position-embeddings": (
        "`rope_scaling` must be a dictionary with two fields, `type` and `factor`, got"
        " {'factor': 8.0, 'original_max_position_embeddings': 8192, 'rope_type': 'llama3'}",
    ),
    "datasets-fsspec-glob-pattern": (
        "ValueError: Invalid pattern: '*.csv' matched no files",
        "FileNotFoundError: Unable to find 'hf://datasets/org/data@main/train/*.parquet'",
    ),
    "keras-standalone-vs-tf-keras": (
        "AttributeError: module 'keras.utils' has no attribute 'to_categorical'",
        "AttributeError: module 'tensorflow' has no attribute 'Session'",
    ),
}

_CASES = [(slug, wording) for slug, wordings in WORDINGS.items() for wording in wordings]
_IDS = [f"{slug}-{i}" for slug, wordings in WORDINGS.items() for i in range(len(wordings))]

#: Runbooks this batch created (the others gained signals or steps).
NEW_RUNBOOKS = (
    "torch-hub-github-rate-limit",
    "windows-page-file-dataloader-workers",
    "tensorboard-duplicate-install",
    "datasets-split-sizes-verification",
    "onnxruntime-tensorrt-ep-workspace",
    "datasets-fsspec-glob-pattern",
)


@pytest.mark.parametrize(("slug", "wording"), _CASES, ids=_IDS)
def test_the_wording_routes_to_its_runbook_and_gets_its_fix(
    slug: str, wording: tuple[str, str]
) -> None:
    check_routes(slug, *wording, ACTION_TERMS[slug])


@pytest.mark.parametrize(
    ("slug", "text"), [(s, t) for s, texts in LOOK_ALIKES.items() for t in texts]
)
def test_errors_of_other_kinds_do_not_match_the_new_signals(slug: str, text: str) -> None:
    assert not match_signals(bundled_runbooks()[slug], text), text


def test_each_new_runbook_cites_public_sources_and_has_signals() -> None:
    runbooks: dict[str, Runbook] = bundled_runbooks()
    for slug in NEW_RUNBOOKS:
        rb = runbooks[slug]
        assert rb.sources and all(s.startswith("https://") for s in rb.sources), slug
        assert rb.signals, slug


def _route_with_traceback(
    error_type: str, message: str, traceback: str, logs: tuple[str, ...] = ()
) -> tuple[list[Retrieved], AnalysisContext, Draft]:
    """As :func:`route_message`, with the traceback an add-on's frames are read from (and
    log lines)."""
    return route_incident(
        {
            "exception_type": error_type,
            "message": message,
            "traceback": traceback,
            "logs": list(logs),
        }
    )


@pytest.mark.parametrize(
    "package",
    ["segmentation_models", "efficientnet"],
)
def test_an_addon_reaching_into_standalone_keras_internals_gets_its_framework_switch(
    package: str,
) -> None:
    traceback = (
        f'File "/usr/local/lib/python3.10/dist-packages/{package}/__init__.py", line 71, in'
        " init_keras_custom_objects\n"
        "    keras.utils.generic_utils.get_custom_objects().update(custom_objects)"
    )
    found, ctx, draft = _route_with_traceback(
        "AttributeError",
        "AttributeError: module 'keras.utils.generic_utils' has no attribute 'get_custom_objects'",
        traceback,
    )
    assert draft.runbook == "keras-standalone-vs-tf-keras", ([r.slug for r in found], draft)
    assert "SM_FRAMEWORK=tf.keras" in draft.action, draft.action
    assert validate(draft, ctx).ok, validate(draft, ctx).complaints


@pytest.mark.parametrize(
    ("error_type", "message"),
    [
        (
            "ImportError",
            "cannot import name 'prepare_model_for_int8_training' from 'peft'"
            " (/opt/venv/lib/python3.10/site-packages/peft/__init__.py)",
        ),
        (
            "ImportError",
            "ImportError: cannot import name 'prepare_model_for_int8_training' from 'peft'",
        ),
        (
            "AttributeError",
            "AttributeError: module 'peft' has no attribute 'prepare_model_for_int8_training'",
        ),
    ],
)
def test_a_name_the_release_notes_say_was_removed_is_not_answered_with_an_upgrade(
    error_type: str, message: str
) -> None:
    found, ctx, draft = route_message(error_type, message)
    action = draft.action.lower()
    assert "prepare_model_for_kbit_training" in draft.action, draft.action
    assert "release that has" not in action, draft.action
    assert "upgrade peft" not in action, draft.action
    assert validate(draft, ctx).ok, validate(draft, ctx).complaints


def test_an_fsdp_error_from_a_run_meant_for_deepspeed_gets_the_launcher_config() -> None:
    found, ctx, draft = _route_with_traceback(
        "ValueError",
        "ValueError: Must flatten tensors with uniform `requires_grad` when"
        " `use_orig_params=False`",
        "",
        ("$ accelerate launch train.py --deepspeed configs/ds_zero2.json",),
    )
    assert draft.runbook == "fsdp-use-orig-params-frozen", ([r.slug for r in found], draft)
    assert "distributed_type: DEEPSPEED" in draft.action, draft.action
    assert validate(draft, ctx).ok, validate(draft, ctx).complaints


def test_the_same_fsdp_error_without_deepspeed_keeps_use_orig_params() -> None:
    found, ctx, draft = route_message(
        "ValueError",
        "ValueError: Must flatten tensors with uniform `requires_grad` when"
        " `use_orig_params=False`",
    )
    assert draft.runbook == "fsdp-use-orig-params-frozen", ([r.slug for r in found], draft)
    assert "use_orig_params=True" in draft.action, draft.action
