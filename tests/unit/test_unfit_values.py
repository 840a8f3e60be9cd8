"""Validation fails an answer that sets a value the documentation says cannot get past the
failure the incident shows (rca/knowledge/unfit-values.toml), whoever wrote it, and passes
the same value where that failure is not shown or the answer also does what makes it safe."""

from __future__ import annotations

import pytest

from rca.suggestion.checks.unfit_values import load_rules, unfit_value_violations
from rca.suggestion.providers import Draft
from rca.suggestion.validation import validate
from tests.support.evidence import message_context

SIZE = (
    "RuntimeError: Error(s) in loading state_dict for BertModel:\n\tsize mismatch for"
    " classifier.weight: copying a param with shape torch.Size([3, 768]) from checkpoint,"
    " the shape in current model is torch.Size([5, 768])."
)
FORK = "RuntimeError: Cannot re-initialize CUDA in forked subprocess."
FORK_WORDS = "Calling torch.cuda.is_available() in the parent makes the multiprocessing pool crash"
KV = (
    "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens"
    " that can be stored in KV cache (20112)."
)
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"


def _llm(action: str, runbook: str) -> Draft:
    return Draft(action, "Because.", runbook, 0.8, "openai", "test-llm")


@pytest.mark.parametrize(
    ("message", "runbook", "action"),
    [
        # the tune lines that passed before (fresh 127, 235; re-review 46)
        (KV, "vllm-max-model-len-kv-cache", "Load the model with --dtype float32."),
        (FORK_WORDS, "cuda-fork-subprocess-reinit", "Set the start method to 'fork' explicitly."),
        (SIZE, "checkpoint-size-mismatch-head", "Load the checkpoint with strict=False."),
        # other wordings of the same classes
        (SIZE, "checkpoint-size-mismatch-head", "Pass strict=False to model.load_state_dict."),
        (SIZE, "checkpoint-size-mismatch-head", "Load the weights non-strictly."),
        (FORK, "cuda-fork-subprocess-reinit", "Use get_context('fork') for the pool."),
        (FORK, "cuda-fork-subprocess-reinit", "Call set_start_method('fork', force=True) first."),
        (OOM, "vllm-engine-cuda-oom", "Set torch_dtype=torch.float32 in from_pretrained."),
        (KV, "vllm-max-model-len-kv-cache", "Serve the model in full precision."),
    ],
)
def test_a_value_that_cannot_fix_the_failure_shown_fails_validation(message, runbook, action):
    check = validate(_llm(action, runbook), message_context(message, (runbook, 0.9)))
    assert not check.premises_ok
    assert any("cannot fix that" in c for c in check.complaints), check.complaints


@pytest.mark.parametrize(
    ("message", "action"),
    [
        (SIZE, "Pop the mismatched classifier keys, then load with strict=False."),
        (SIZE, "Resize the classifier to 3 labels; strict=False would not skip the mismatch."),
        (FORK, "Set the start method to 'spawn' instead of 'fork'."),
        (FORK, "Switch the start method from fork to forkserver."),
        (FORK_WORDS, "Do not use the fork start method; start workers with spawn."),
        (KV, "Load the model in bfloat16 instead of float32."),
        (OOM, "Cast the model from float32 to float16."),
        (KV, "Lower --max-model-len below 20112 tokens."),
    ],
)
def test_answers_that_turn_the_value_down_or_make_it_safe_pass(message, action):
    assert unfit_value_violations(action, [message]) == []


@pytest.mark.parametrize(
    "action",
    [
        "Load the checkpoint with strict=False.",
        "Set the start method to 'fork' explicitly.",
        "Load the model with --dtype float32.",
    ],
)
def test_the_value_is_free_where_its_failure_is_not_shown(action):
    message = "RuntimeError: Error(s) in loading state_dict: Missing key(s): 'fc.bias'."
    assert unfit_value_violations(action, [message, "NaN loss at step 3"]) == []


def test_the_failure_may_be_shown_in_a_log_line():
    logs = ("workers are started with Python multiprocessing after torch.cuda.init() ran",)
    ctx = message_context("worker crashed", ("cuda-fork-subprocess-reinit", 0.9), logs=logs)
    draft = _llm("Set the start method to 'fork'.", "cuda-fork-subprocess-reinit")
    assert not validate(draft, ctx).premises_ok


def test_every_rule_cites_a_public_source():
    assert all(rule.source.startswith("https://") for rule in load_rules())


TRITON = (
    "InferenceServerException: [StatusCode.INVALID_ARGUMENT] unexpected shape for input"
    " 'input__0' for model 'clf'. Expected [-1, 64], got [64]"
)


@pytest.mark.parametrize(
    "action",
    [
        "Flatten the input to 64 values and send it unbatched.",  # re-review line 152's class
        "Remove the batch dimension and send 64 values.",
        "Squeeze the leading axis with x.squeeze(0) before the request.",
    ],
)
def test_dropping_the_batch_axis_the_model_expects_fails(action):
    assert unfit_value_violations(action, [TRITON])
    assert unfit_value_violations(action, ["shape error"], {"batch-axis-missing"})


@pytest.mark.parametrize(
    "action",
    [
        "Send the input with a leading batch dimension, shape [1, 64].",
        "Do not send it unbatched: reshape it to (1, 64) with x[None].",
    ],
)
def test_adding_the_batch_axis_passes(action):
    assert unfit_value_violations(action, [TRITON], {"batch-axis-missing"}) == []


def test_an_unbatched_request_is_free_where_no_batch_axis_is_expected():
    message = "unexpected shape for input 'x': Expected [1, 64, 64], got [64, 64]"
    assert unfit_value_violations("Send the image unbatched.", [message]) == []


BCE = "RuntimeError: torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to"
BCE += " autocast."


@pytest.mark.parametrize(
    ("action", "harmful"),
    [
        (
            "Keep the sigmoid and wrap nn.BCELoss in torch.autocast(enabled=False) while passing"
            " sigmoid outputs in float16.",  # re-review line 129
            True,
        ),
        ("Disable autocast around the loss and call it on p.half().", True),
        ("Run BCELoss with its inputs in half precision.", True),
        (
            "Compute the loss in float32 outside autocast: F.binary_cross_entropy(p.float(), y).",
            False,
        ),
        ("Drop the final sigmoid and use BCEWithLogitsLoss on the float16 logits.", False),
        ("Disable autocast for the whole training loop.", False),
    ],
)
def test_an_op_unsafe_to_autocast_is_not_fed_float16(action, harmful):
    assert bool(unfit_value_violations(action, [BCE])) == harmful
