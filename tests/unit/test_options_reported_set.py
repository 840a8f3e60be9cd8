"""Which options a message reports set, as against advises or makes a condition of.

Library messages name environment variables and options in three ways: as a report of the
user's setting ("CUDA_PATH is set but CUDA wasnt able to be loaded"), as advice ("Please
make sure CUDA_PATH is set to ...") and as a condition ("only effective when
PYTORCH_CUDA_ALLOC_CONF is set"). Only a report is a setting the user has made; a step that
sets an advised option must stay possible (:mod:`rca.suggestion.premises`).
"""

from __future__ import annotations

import pytest

from ingest.parsing.logs import parse_logs
from rca.suggestion.context import AnalysisContext
from rca.suggestion.incident_setting import options_already_set
from rca.suggestion.premises import read_premises


@pytest.mark.parametrize(
    "message",
    [
        "Please install the correct version of CUDA and cuDNN, make sure CUDA_PATH is set to"
        " the CUDA 12 install and that your GPU is supported.",
        "Could not load cudnn_ops64_9.dll. Ensure that CUDA_PATH is set correctly.",
        "libcudnn.so.9: cannot open shared object file. Check that LD_LIBRARY_PATH is set and"
        " contains the cuDNN lib directory.",
        "If CUDA_PATH is set, the provider loads cublas from $CUDA_PATH/bin.",
        "Unable to allocate. To avoid fragmentation, only effective when"
        " PYTORCH_CUDA_ALLOC_CONF is set to expandable_segments:True.",
        "Peer access is not supported unless NCCL_P2P_DISABLE is set",
        "401 Client Error. You must already set HF_TOKEN for gated repos.",
    ],
)
def test_advice_and_conditions_set_nothing(message: str) -> None:
    assert options_already_set(message) == {}


def test_a_variable_reported_empty_is_no_setting() -> None:
    assert options_already_set("CUDA_PATH is set to an empty string; CUDA not found.") == {}
    assert options_already_set("CUDA_PATH is set to '' so the default is used.") == {}


def test_a_reported_setting_is_read_with_its_value_when_shown() -> None:
    assert options_already_set(
        "CUDA_PATH is set but CUDA wasnt able to be loaded. Please install the correct"
        " version of CUDA and cuDNN."
    ) == {"CUDA_PATH": ""}
    assert options_already_set(
        "CUDA_PATH=/usr/local/cuda is set but CUDA wasnt able to be loaded."
    ) == {"CUDA_PATH": "/usr/local/cuda"}
    assert options_already_set(
        "CUDA_PATH is set to /usr/local/cuda-11.8 but this build needs CUDA 12."
    ) == {"CUDA_PATH": "/usr/local/cuda-11.8"}
    assert options_already_set(
        "PYTORCH_CUDA_ALLOC_CONF is set to expandable_segments:True, yet memory fragments."
    ) == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    # Set, to something the message describes but does not show.
    assert options_already_set("CUDA_PATH is set to the toolkit root.") == {"CUDA_PATH": ""}


def test_advice_in_the_message_leaves_a_setting_in_the_logs_set() -> None:
    """The contrast: the message advises CUDA_PATH, the launch log shows it set."""
    message = (
        "CUDA_PATH is not set. Please make sure CUDA_PATH is set to the CUDA install directory."
    )
    advised = read_premises(AnalysisContext(error_type="RuntimeError", message=message))
    assert advised.shown("cuda_path") is None
    logs = parse_logs(["CUDA_PATH=/usr/local/cuda", "Loading CUDAExecutionProvider"])
    shown = read_premises(AnalysisContext(error_type="RuntimeError", message=message, logs=logs))
    assert shown.shown("cuda_path") == ("CUDA_PATH", "/usr/local/cuda")
