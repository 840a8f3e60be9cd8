"""The first-run demo's programs really fail, and what they report is a valid incident.

All programs run in one `python -m demo` subprocess, as `make run` runs them (torch and
transformers imported once: ~10 s on 2 cores), and every check reads that one output.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from ingest.parsing.stacktrace import parse_stacktrace
from ingest.schema import IncidentIn
from webapp import demo_incidents

# What each program must raise: the exception type and a fragment of torch's own message.
EXPECTED = {
    "linear-width": (
        "RuntimeError",
        "mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
    ),
    "meta-device": ("RuntimeError", "Tensor on device meta is not on the expected device cpu"),
    "half-precision": ("RuntimeError", "mat1 and mat2 must have the same dtype"),
    "checkpoint-vocab": ("RuntimeError", "size mismatch for embed.weight"),
    "tokenizer-overflow": ("RuntimeError", "must match the size of tensor b (512)"),
    "conv-channels": ("RuntimeError", "to have 3 channels, but got 1 channels instead"),
    "class-count": ("IndexError", "Target 10 is out of bounds"),
    "nan-loss": ("FloatingPointError", "Loss became infinite or NaN"),
    "cpu-oom": ("RuntimeError", "DefaultCPUAllocator: can't allocate memory"),
}


@pytest.fixture(scope="module")
def incidents() -> dict[str, dict[str, Any]]:
    produced = demo_incidents.run_programs(timeout=240)
    return {item["event_id"].removeprefix("demo-"): item for item in produced}


def test_every_torch_program_fails_with_the_error_users_see(incidents):
    assert len(incidents) >= 8
    for name, (error_type, fragment) in EXPECTED.items():
        assert incidents[name]["error_type"] == error_type, name
        assert fragment in incidents[name]["message"], (name, incidents[name]["message"])


def test_each_incident_is_valid_and_labelled_as_demo(incidents):
    for name, item in incidents.items():
        incident = IncidentIn.model_validate(item)
        assert incident.environment == "demo", name
        assert incident.tags["demo"] is True
        assert incident.inference_context is not None and incident.inference_context.framework


def test_the_traceback_is_real_and_ends_in_the_programs_own_frames(incidents):
    for name, item in incidents.items():
        exceptions = parse_stacktrace(item["stacktrace"])
        assert exceptions[-1]["type"] == item["error_type"], name
        own = [f for f in exceptions[-1]["frames"] if f["in_app"]]
        program = f"demo/programs/{name.replace('-', '_')}.py"
        assert any(Path(f["filename"]).as_posix().endswith(program) for f in own), (name, own)
        assert any(f["function"] == "main" for f in own)


def test_shape_errors_carry_the_shapes_the_program_had(incidents):
    assert incidents["linear-width"]["shape_diff"] == [
        {"tensor": "x", "op": "linear", "expected": [4, 512], "actual": [4, 256]}
    ]
    assert incidents["conv-channels"]["shape_diff"][0]["actual"] == [8, 1, 64, 64]
    vocab = incidents["checkpoint-vocab"]["shape_diff"][0]
    assert vocab["expected"] == [32000, 32] and vocab["actual"] == [32004, 32]
    # The token count is the tokenizer's own: longer than the 512 positions, as the warning says.
    overflow = incidents["tokenizer-overflow"]
    tokens = overflow["shape_diff"][0]["actual"][1]
    assert tokens > 512 and f"({tokens} > 512)" in overflow["logs"][0]["message"]


def test_the_diverging_loss_is_logged_before_the_check_stops_training(incidents):
    logs = incidents["nan-loss"]["logs"]
    assert len(logs) >= 3 and all(entry["logger"] == "trainer" for entry in logs)
    assert float(logs[-1]["message"].split()[3]) > 1e20  # it blew up before it became NaN


def test_keras_runs_only_where_tensorflow_is_installed(incidents):
    with_tensorflow = importlib.util.find_spec("tensorflow") is not None
    assert ("keras-input-shape" in incidents) == with_tensorflow


def test_the_demo_runs_once_per_data_dir_and_rca_demo_0_skips_it(tmp_path, monkeypatch):
    monkeypatch.delenv("RCA_DEMO", raising=False)
    assert demo_incidents.wanted(tmp_path)
    monkeypatch.setenv("RCA_DEMO", "0")
    assert not demo_incidents.wanted(tmp_path)
    monkeypatch.setenv("RCA_DEMO", "1")
    (tmp_path / demo_incidents.MARKER).write_text("9 demo incidents sent\n")
    assert not demo_incidents.wanted(tmp_path)


#: What fixes each demo program (its docstring says what is wrong with it): the runbook the
#: suggestion must come from and words its action must hold. The demo is the first analysis
#: a new user reads; a wrong answer here is the product's first impression.
FIXED_BY = {
    "linear-width": ("matmul-shape-mismatch-linear", ("in_features", "256")),
    "meta-device": ("torch-model-on-meta-device", ("load_state_dict", "assign=True")),
    "half-precision": ("dtype-mismatch-half-float", ("dtype",)),
    "checkpoint-vocab": ("checkpoint-size-mismatch-vocab", ("resize_token_embeddings",)),
    "tokenizer-overflow": ("seq-too-long-tokenizer-truncation", ("truncation=True",)),
    "conv-channels": ("conv-channel-mismatch-grayscale-rgba", ("RGB",)),
    "class-count": ("label-out-of-range-classes", ("num_classes", "max(label) + 1")),
    "nan-loss": ("nan-loss-learning-rate", ("learning rate",)),
    "cpu-oom": ("host-oom-checkpoint-loading", ("RAM",)),
}


@pytest.mark.parametrize("name", sorted(FIXED_BY))
def test_each_demo_incident_gets_the_suggestion_that_fixes_its_program(incidents, name):
    """As posted (stack, logs, the program's own shape diff), through lexical retrieval and
    the offline provider: the right runbook and step, valid. A grayscale batch is not told to
    permute HWC to CHW, labels counted from 1 are not told to use ignore_index, and a loss
    that diverged over logged steps is not blamed on NaN in the data."""
    from rca.suggestion.validation import validate
    from tests.support.vendor_routing import route_incident

    runbook, words = FIXED_BY[name]
    _found, ctx, draft = route_incident(incidents[name])
    assert draft.runbook == runbook, (draft.runbook, draft.action)
    assert all(word in draft.action for word in words), draft.action
    check = validate(draft, ctx)
    assert check.ok, check.complaints
