"""Failure kinds a reader of the offline answers on the dev cases found answered by another
kind's step route to the steps written for them from their libraries' documentation.

Two new runbooks: NCCL refusing two ranks on one GPU ("Duplicate GPU detected", whose generic
"NCCL error ... invalid usage" wording the general NCCL page used to take) and `accelerate
launch` applying a saved default config nobody chose for this run. One existing runbook gained
the wordings of its kind it missed: ONNX Runtime failing to write its optimized copy of a model
over 2 GB (`Protobuf serialization failed`, which the model-load page used to take) and the
exporter asking for a file path. Each wording is sent as a bare incident through lexical
retrieval and the offline provider: the runbook comes first and its action names the
documented fix. Errors of other kinds must not match the new signals.
"""

from __future__ import annotations

from pathlib import Path

from rca.corpus.files import bundled_runbook_dir, parse_runbook, remediation_steps
from tests.support.vendor_checks import Wording, batch_tests

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "nccl-duplicate-gpu-rank",
        "DistBackendError",
        "torch.distributed.DistBackendError: NCCL error in:"
        " /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid"
        " usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
        "Last error:\n"
        "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000",
        ("set_device", "LOCAL_RANK", "hard-coded"),
    ),
    Wording(
        "nccl-duplicate-gpu-rank",
        "ncclInvalidUsage",
        "init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000",
        ("set_device", "LOCAL_RANK"),
    ),
    Wording(
        "accelerate-saved-default-config",
        "ValueError",
        "ValueError: When using `deepspeed_config_file`, the following accelerate config"
        " variables will be ignored: ['gradient_accumulation_steps', 'gradient_clipping',"
        " 'zero_stage', 'offload_optimizer_device', 'offload_param_device',"
        " 'zero3_save_16bit_model', 'mixed_precision'].\n"
        "Please specify them appropriately in the DeepSpeed config file.\n"
        "If you are using an accelerate config file, remove others config variables mentioned"
        " in the above specified list.\n"
        "The easiest method is to create a new config following the questionnaire via"
        " `accelerate config`.",
        ("DeepSpeed JSON", "accelerate config"),
    ),
    Wording(
        "onnx-model-2gb-external-data",
        "InvalidProtobuf",
        "[libprotobuf ERROR google/protobuf/message_lite.cc:410] onnx.ModelProto exceeded"
        " maximum protobuf size of 2GB: 3219536219\n"
        "onnxruntime.capi.onnxruntime_pybind11_state.InvalidProtobuf: [ONNXRuntimeError] : 7 :"
        " INVALID_PROTOBUF : Protobuf serialization failed.",
        ("optimized_model_filepath",),
    ),
    Wording(
        "onnx-model-2gb-external-data",
        "RuntimeError",
        "RuntimeError: The serialized model is larger than the 2GiB limit imposed by the"
        " protobuf library. Therefore the output file must be a file path, so that the ONNX"
        " external data can be written to the same directory. Please specify the output file"
        " name.",
        ("file path", "external_data=True"),
    ),
    Wording(
        "onnx-model-2gb-external-data",
        "ValueError",
        "ValueError: Message onnx.ModelProto exceeds maximum protobuf size of 2GB: 2503920348",
        ("save_as_external_data=True",),
    ),
)

#: slug -> errors of other kinds that the runbook's signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "nccl-duplicate-gpu-rank": (
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1691,"
        " unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
        "RuntimeError: CUDA error: invalid device ordinal",
    ),
    "accelerate-saved-default-config": (
        "ValueError: Please correct the following DeepSpeed config values that mismatch"
        " TrainingArguments values: - ds train_micro_batch_size_per_gpu=4 vs hf"
        " per_device_train_batch_size=8",
        "Exception: Could not find the transformer layer class to wrap in the model.",
    ),
    "onnx-model-2gb-external-data": (
        "onnxruntime.capi.onnxruntime_pybind11_state.InvalidProtobuf: [ONNXRuntimeError] : 7 :"
        " INVALID_PROTOBUF : Load model from model.onnx failed:Protobuf parsing failed.",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)


def test_each_runbook_file_parses_with_its_slug_class_and_steps() -> None:
    """The files load through the runbook parser as a team's own pages would: the slug is the
    file name, the class is set, and the remediation has numbered steps."""
    for slug in LOOK_ALIKES:
        path = Path(bundled_runbook_dir()) / f"{slug}.md"
        rb = parse_runbook(path.read_text(encoding="utf-8"), str(path))
        assert rb.slug == slug
        assert rb.failure_class
        assert len(remediation_steps(rb)) >= 3, slug
