"""Issue 16 items 2, 3, 7: a file the loader found and rejected is not fixed by its path.

"Use an absolute path" or "check that the file exists" is the usual fix for a loader that
looked in the wrong place. When the message names the file by an absolute path and says the
loader read it and rejected its contents (``Load model from /srv/m.onnx failed: Protobuf
parsing failed``), :mod:`rca.suggestion.loaded_file` reads ``file-location-ruled-out``; steps
that re-point the path carry it in ``unless`` and :mod:`rca.suggestion.checks.file_location`
fails the same action in any wording, offline or from an LLM. A relative path, or a message
saying the file was not found, keeps the path steps.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rca.suggestion.checks.file_location import location_violations, repoints_path
from rca.suggestion.context import AnalysisContext
from rca.suggestion.loaded_file import (
    FORMAT_REJECTED,
    LOCATION_RULED_OUT,
    PATH_ABSOLUTE,
    loaded_file_facts,
)
from rca.suggestion.premises import read_premises
from rca.suggestion.prompts import render
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from tests.support.evidence import evidence
from tests.support.scripted_llm import scripted_llm

KERAS = ("keras-load-model-path-not-found", 0.9)
MISSING = ("model-file-missing-weights", 0.9)
LFS = ("model-file-git-lfs-pointer", 0.6)
ONNX = ("onnx-model-load-invalid", 0.6)

#: (message as posted, log lines, whether the location is ruled out). Wordings from the
#: loaders' sources and public threads; the paths vary.
RULED_OUT = [
    # ONNX Runtime InferenceSession on a Git LFS pointer (onnxruntime issues, INVALID_PROTOBUF)
    (
        "InvalidProtobuf: [ONNXRuntimeError] : 7 : INVALID_PROTOBUF : Load model from"
        " /home/ci/work/models/decoder.onnx failed:Protobuf parsing failed.",
        (),
    ),
    # The same on Windows
    (
        "onnxruntime.capi.onnxruntime_pybind11_state.InvalidProtobuf: [ONNXRuntimeError] : 7 :"
        " INVALID_PROTOBUF : Load model from C:\\Users\\ana\\Desktop\\yolo\\best.onnx failed:"
        "Protobuf parsing failed.",
        (),
    ),
    # transformers from_pretrained (modeling_utils.load_state_dict: raised after open())
    (
        "OSError: Unable to load weights from pytorch checkpoint file for"
        " '/root/.cache/huggingface/hub/models--org--m/snapshots/1a2b/pytorch_model.bin' at"
        " '/root/.cache/huggingface/hub/models--org--m/snapshots/1a2b/pytorch_model.bin'. If you"
        " tried to load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True.",
        (),
    ),
    # Keras 3 load_model on a SavedModel directory (keras/src/saving/saving_api.py)
    (
        "ValueError: File format not supported: filepath=/content/drive/MyDrive/saved_model."
        " Keras 3 only supports V3 `.keras` files and legacy H5 format files (`.h5` extension).",
        (),
    ),
    # PyTorch torch.load on a truncated zip; the path in the loader's log line
    (
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central"
        " directory",
        ("INFO loading checkpoint from /mnt/ckpt/run7/epoch_12.pth",),
    ),
    # torch.load on an LFS pointer (pickle's "invalid load key")
    (
        "_pickle.UnpicklingError: invalid load key, 'v'.",
        ("Loading weights /opt/models/detector/yolox_s.pth",),
    ),
    # safetensors on an HTML page or pointer
    (
        "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",
        ("loading file /data/hf/llama/model-00001-of-00002.safetensors",),
    ),
    # HDF5 (h5py 3) on a file that is not HDF5
    (
        "OSError: Unable to synchronously open file (file signature not found)",
        ("Loading model from /srv/app/weights/classifier.h5",),
    ),
    # TensorFlow checkpoint restore of a file in another format
    (
        "DataLossError: Unable to open table file /tmp/train/model.ckpt-1000: Data loss: not an"
        " sstable (bad magic number): perhaps your file is in a different file format and you"
        " need to use a different restore operator?",
        (),
    ),
    # transformers config that is not JSON
    (
        "OSError: It looks like the config file at '/models/bert-base/config.json' is not a"
        " valid JSON file.",
        (),
    ),
]

#: The path steps must stay: the file was not found, or its path is relative (or ``~``).
NOT_RULED_OUT = [
    "FileNotFoundError: [Errno 2] No such file or directory: '/workspace/ckpt/best.pth'",
    "onnxruntime.capi.onnxruntime_pybind11_state.NoSuchFile: [ONNXRuntimeError] : 3 :"
    " NO_SUCHFILE : Load model from /models/m.onnx failed:Load model /models/m.onnx failed."
    " File doesn't exist",
    "OSError: Unable to open file (unable to open file: name = '/content/model.h5', errno = 2,"
    " error message = 'No such file or directory', flags = 0, o_flags = 0)",
    "InvalidProtobuf: [ONNXRuntimeError] : 7 : INVALID_PROTOBUF : Load model from model.onnx"
    " failed:Protobuf parsing failed.",
    "gguf_init_from_file: invalid magic characters tjgg. llama_model_loader: failed to load"
    " model from .\\models\\7B\\ggml-model-f16.bin",
    "OSError: Unable to load weights from pytorch checkpoint file for"
    " '~/models/m/pytorch_model.bin' at '~/models/m/pytorch_model.bin'.",
    "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central"
    " directory",
]


def _ctx(message: str, *ranked: tuple[str, float], logs: tuple[str, ...] = ()) -> AnalysisContext:
    return AnalysisContext(
        error_type=message.split(":", 1)[0] if ":" in message[:60] else "",
        message=message,
        logs=[{"message": line} for line in logs],
        evidence=evidence(*ranked),
    )


def _llm(action: str, runbook: str = MISSING[0]) -> Draft:
    return Draft(action, "The loader rejected the file.", runbook, 0.8, "openai", "test-llm")


# --------------------------------------------------------------------------- the facts


@pytest.mark.parametrize(("message", "logs"), RULED_OUT)
def test_loaders_that_read_the_file_at_an_absolute_path_rule_its_location_out(message, logs):
    facts = loaded_file_facts([message, *logs])
    assert {PATH_ABSOLUTE, FORMAT_REJECTED, LOCATION_RULED_OUT} <= facts


@pytest.mark.parametrize("message", NOT_RULED_OUT)
def test_a_missing_file_or_a_relative_path_keeps_the_location_open(message):
    assert LOCATION_RULED_OUT not in loaded_file_facts([message])


def test_a_path_in_a_traceback_frame_is_not_the_loaded_file():
    texts = [
        'File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 1005, in load',
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central"
        " directory",
    ]
    assert loaded_file_facts(texts) == {FORMAT_REJECTED}


def test_a_relative_name_for_the_same_load_claims_no_absolute_path():
    texts = [RULED_OUT[0][0], "loading model.onnx from the current directory"]
    assert PATH_ABSOLUTE not in loaded_file_facts(texts)


def test_a_bare_name_of_the_absolute_file_is_the_same_file():
    """transformers logs the file's name, then where the cache holds it."""
    texts = [
        "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",
        "loading weights file model.safetensors from cache at"
        " /home/u/.cache/huggingface/hub/models--org--m/snapshots/9f/model.safetensors",
    ]
    assert LOCATION_RULED_OUT in loaded_file_facts(texts)
    texts[1] = texts[1].replace("file model.safetensors", "file other.safetensors")
    assert LOCATION_RULED_OUT not in loaded_file_facts(texts)


def test_the_facts_reach_the_premises_and_the_prompt():
    ctx = _ctx(RULED_OUT[0][0], ONNX, MISSING)
    assert LOCATION_RULED_OUT in read_premises(ctx).facts
    prompt = "\n".join(message["content"] for message in render(ctx))
    assert "the loader reached the file and rejected its contents" in prompt
    assert "making the path absolute" in prompt


# --------------------------------------------------------------------------- the steps


@pytest.mark.parametrize(
    ("message", "ranked"),
    [(RULED_OUT[2][0], (MISSING, LFS)), (RULED_OUT[3][0], (KERAS,))],
)
def test_the_offline_step_is_not_a_path_step(message, ranked):
    ctx = _ctx(message, *ranked)
    suggestion = OfflineProvider().suggest(ctx)
    assert not repoints_path(suggestion.action), suggestion.action
    assert validate(suggestion, ctx).ok


def test_keras_gets_the_loader_of_the_saved_format():
    suggestion = OfflineProvider().suggest(_ctx(RULED_OUT[3][0], KERAS))
    assert "TFSMLayer" in suggestion.action or "saved_model.load" in suggestion.action


@pytest.mark.parametrize(
    "message",
    [
        "FileNotFoundError: [Errno 2] No such file or directory: 'checkpoints/best.pth'",
        "FileNotFoundError: [Errno 2] No such file or directory: '/srv/models/best.pth'",
        "OSError: Unable to load weights from pytorch checkpoint file for"
        " 'output/pytorch_model.bin' at 'output/pytorch_model.bin'.",
    ],
)
def test_a_missing_or_relative_file_still_gets_the_path_step(message):
    ctx = _ctx(message, MISSING)
    suggestion = OfflineProvider().suggest(ctx)
    assert "absolute path" in suggestion.action, suggestion.action
    assert validate(suggestion, ctx).ok


def test_keras_missing_file_still_gets_the_complete_path_step():
    message = "OSError: No file or directory found at ./models/best.h5"
    suggestion = OfflineProvider().suggest(_ctx(message, KERAS))
    assert "complete path" in suggestion.action, suggestion.action


# --------------------------------------------------------------------------- any wording


@pytest.mark.parametrize(
    ("action", "harmful"),
    [
        ("Use an absolute path to the model file.", True),
        ("Check that the checkpoint exists with `os.path.exists` before loading it.", True),
        ("Run the script from the project's working directory.", True),
        ("Verify the model path is correct.", True),
        ("Pass the full path of the checkpoint to `from_pretrained`.", True),
        ("Make sure the file is present at that location before loading.", True),
        ("Fetch the real weights with `git lfs pull` in the clone.", False),
        ("Download the checkpoint again and compare its size with the published file.", False),
        ("Check the file's size and first bytes; replace an LFS pointer with the file.", False),
        ("Load the SavedModel directory with `keras.layers.TFSMLayer`.", False),
        ("Use the absolute path only after re-downloading the corrupted file.", False),
    ],
)
def test_an_llm_answer_repointing_the_path_fails_validation(action, harmful):
    check = validate(_llm(action), _ctx(RULED_OUT[0][0], MISSING, ONNX))
    assert (not check.premises_ok) == harmful, check.complaints
    if harmful:
        assert any("do not change or check the file's path" in c for c in check.complaints)


@pytest.mark.parametrize("message", NOT_RULED_OUT[:4])
def test_the_same_answer_passes_when_the_location_is_open(message):
    check = validate(_llm("Use an absolute path to the model file."), _ctx(message, MISSING))
    assert not location_violations("Use an absolute path to the model file.", set())
    assert check.premises_ok, check.complaints


def test_restating_the_runbook_step_fails_too():
    """The step carries the fact in ``unless``: its own words are refused as a premise."""
    action = "Point the loader at the directory that contains `config.json` and the weight files."
    check = validate(_llm(action), _ctx(RULED_OUT[2][0], MISSING, LFS))
    assert not check.premises_ok
    assert any("does not apply to this incident" in c for c in check.complaints), check.complaints


def test_an_llm_that_repoints_the_path_is_reasked_and_the_fetch_kept(httpserver):
    """Issue 16 item 7 against a local OpenAI-protocol server."""
    answers = [
        {
            "action": "Use an absolute path to `decoder.onnx` and check that it exists.",
            "reason": "Relative paths resolve against the working directory.",
            "runbook": ONNX[0],
            "confidence": 0.8,
        },
        {
            "action": "Fetch the real `decoder.onnx` with `git lfs pull` in the clone.",
            "reason": "The file on disk is a Git LFS pointer, which is not an ONNX protobuf.",
            "runbook": ONNX[0],
            "confidence": 0.7,
        },
    ]
    provider, requests = scripted_llm(httpserver, *answers)
    outcome = write_suggestion(_ctx(RULED_OUT[0][0], ONNX, MISSING), provider)
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert "file-location-ruled-out" in requests[0]["messages"][-1]["content"]
    assert outcome.draft.action == answers[1]["action"] and outcome.validation.ok


# --------------------------------------------------------------------------- properties

_segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)
_ext = st.sampled_from(["onnx", "pt", "pth", "bin", "safetensors", "h5", "keras", "gguf"])
_REJECTIONS = [
    "INVALID_PROTOBUF : Load model from {p} failed:Protobuf parsing failed.",
    "OSError: Unable to load weights from pytorch checkpoint file for '{p}' at '{p}'.",
    "RuntimeError: PytorchStreamReader failed reading zip archive (loading {p})",
    "SafetensorError: Error while deserializing header: HeaderTooLarge while loading '{p}'",
    "OSError: Unable to open file (file signature not found), name = '{p}'",
    "gguf_init_from_file: invalid magic characters; failed to load model from {p}",
]


@given(
    parts=st.lists(_segment, min_size=1, max_size=5),
    ext=_ext,
    windows=st.booleans(),
    which=st.integers(0, len(_REJECTIONS) - 1),
)
def test_an_absolute_path_is_ruled_out_and_a_relative_one_is_not(parts, ext, windows, which):
    name = f"{parts[-1]}.{ext}"
    absolute = (
        ("C:\\" + "\\".join([*parts[:-1], name]))
        if windows
        else "/" + "/".join([*parts[:-1], name])
    )
    relative = "/".join([*parts[:-1], name])
    template = _REJECTIONS[which]
    assert LOCATION_RULED_OUT in loaded_file_facts([template.format(p=absolute)])
    assert LOCATION_RULED_OUT not in loaded_file_facts([template.format(p=relative)])
    missing = template.format(p=absolute) + "\nFileNotFoundError: No such file or directory"
    assert LOCATION_RULED_OUT not in loaded_file_facts([missing])


@given(st.text(alphabet=st.sampled_from(list("/\\C:'\" .onxptbinh5load\n=~")), max_size=3000))
def test_arbitrary_text_never_raises(text):
    loaded_file_facts([text, text])
    location_violations(text, {LOCATION_RULED_OUT})


def _seconds(piece: str, size: int) -> float:
    text = (piece * (size // len(piece) + 1))[:size]
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        loaded_file_facts([text])
        location_violations(text, {LOCATION_RULED_OUT})
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize(
    "piece",
    [
        "/a/b/c",
        "load '/x/y.onnx",
        "Failed to interpret file /a ",
        "check the path the path ",
        "C:\\a\\b ",
        "is not a valid " * 3,
    ],
)
def test_reading_is_linear_in_adversarial_text(piece):
    small, large = _seconds(piece, 5_000), _seconds(piece, 200_000)
    # 40x the text; a backtracking engine on these repeats would take far longer.
    assert large < max(1.0, 60 * small), (small, large)
