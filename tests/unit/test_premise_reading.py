"""Reading premises from untrusted incident text: generic rules, any input safe.

The facts and the setting are read from whatever a client posted, so any string must give
an answer without raising; and the rules must hold on texts they were not written from.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.frames import make_frame
from rca.suggestion.checks.placeholders import template_remnants
from rca.suggestion.context import AnalysisContext
from rca.suggestion.incident_setting import frameworks_in, options_already_set, read_setting
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft
from rca.suggestion.step_options import option_key
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case, dev_cases
from tests.support.evidence import evidence


@settings(max_examples=200, deadline=None)
@given(error_type=st.text(max_size=200), message=st.text(max_size=2000))
def test_any_incident_text_gives_premises_without_raising(error_type: str, message: str) -> None:
    premises = read_premises(AnalysisContext(error_type=error_type, message=message))
    for option in premises.options_set:  # named as the message spells it (a flag's - as _)
        assert option_key(option) in message.lower().replace("-", "_")


def test_options_are_read_from_set_enabled_and_already_phrasings() -> None:
    assert options_already_set("Since `find_unused_parameters=True` is enabled, this") == {
        "find_unused_parameters": "True"
    }
    assert options_already_set("`max_length` is already set to 20.") == {"max_length": "20"}
    assert options_already_set("we already passed --enforce-eager to the server") == {
        "enforce-eager": ""
    }
    # A sentence that advises setting an option says nothing about it being set.
    assert options_already_set(dev_case("ra001")["message"]) == {}
    assert options_already_set("memory is already allocated; it is set") == {}


def test_no_dev_message_claims_an_option_it_only_advises() -> None:
    """Real messages advise options ("try increasing `gpu_memory_utilization`", "passing
    find_unused_parameters=True"); the one dev message read as having one set reports it:
    onnxruntime's "CUDA_PATH is set but CUDA wasnt able to be loaded" (its value unshown)."""
    claimed = {c["id"]: options_already_set(c["message"]) for c in dev_cases()}
    assert {case_id: options for case_id, options in claimed.items() if options} == {
        "rd019": {"CUDA_PATH": ""}
    }


def test_frameworks_come_from_code_not_from_prose() -> None:
    assert frameworks_in(["File '/venv/lib/site-packages/torch/nn/functional.py'"]) == {"pytorch"}
    assert frameworks_in(["tensorflow.python.framework.errors_impl.InvalidArgumentError"]) == {
        "tensorflow"
    }
    assert frameworks_in(["The torch was passed; jax is a word here"]) == set()
    frame = make_frame("/srv/app/model.py", "build", 3, context_line="x = keras.layers.Dense(4)")
    setting = read_setting("ValueError", "bad input", [frame])
    assert setting.frameworks == {"tensorflow"}
    assert read_setting("XlaRuntimeError", "DNN library initialization failed").frameworks == {
        "jax"
    }


def test_template_remnants_are_found_outside_code_only() -> None:
    assert template_remnants("Set it to the K1 in the message.") == ["the K1 in the message"]
    assert template_remnants("Set `max_length` to {value}.") == ["{value}"]
    assert template_remnants("Run `f'{name}'` and `sd = {k: v}`.") == []
    assert template_remnants("Set the layer's `in_features` to 9216.") == []
    assert template_remnants("TODO: fill in") == ["TODO"]


def test_a_placeholder_in_a_suggestion_fails_validation_whoever_wrote_it() -> None:
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message=dev_case("c014")["message"],
        evidence=evidence(("matmul-shape-mismatch-linear", 0.9)),
    )
    draft = Draft(
        "Set `in_features` to {actual-size}.",
        "The input has more features than the layer.",
        "matmul-shape-mismatch-linear",
        0.6,
        "openai",
        "m",
    )
    check = validate(draft, ctx)
    assert not check.ok and not check.placeholders_ok
    assert "placeholder" in " ".join(check.complaints)


@pytest.mark.parametrize(
    ("action", "contradicted"),
    [
        ("Set `find_unused_parameters=True` in DistributedDataParallel.", True),
        ("Pass find_unused_parameters to DistributedDataParallel.", True),
        ("Set find_unused_parameters to True on the wrapper.", True),
        ("Set `find_unused_parameters=False` and freeze the unused head.", False),
        ("Turn off find_unused_parameters while checkpointing.", False),
        ("Remove the parameters that never reach the loss.", False),
    ],
)
def test_an_option_already_on_may_be_changed_but_not_set_again(
    action: str, contradicted: bool
) -> None:
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message=dev_case("ra001")["message"]
        + " Since `find_unused_parameters=True` is enabled, this likely means that not all"
        " `forward` outputs participate in computing loss.",
        evidence=evidence(("ddp-unused-parameters", 0.9)),
    )
    draft = Draft(action, "Because of the message.", "ddp-unused-parameters", 0.5, "openai", "m")
    assert validate(draft, ctx).premises_ok is not contradicted


@pytest.mark.parametrize(
    ("action", "contradicted"),
    [("Set max_length to 20 in generate().", True), ("Set max_length to 4096.", False)],
)
def test_an_option_with_a_value_is_contradicted_only_by_the_same_value(
    action: str, contradicted: bool
) -> None:
    ctx = AnalysisContext(error_type="ValueError", message="`max_length` is already set to 20.")
    draft = Draft(action, "Because of the message.", "", 0.5, "openai", "m")
    assert validate(draft, ctx).premises_ok is not contradicted
