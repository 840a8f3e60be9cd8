"""The remedy an error message names, as a candidate of the offline step ranking (issue 16).

The step of ``error-message-names-remedy`` (``{message-advice}``) competes from any retrieved
runbook with its own lower weight (``OfflineWeights.message_advice``): it wins when no
runbook step fits, loses to a fitting one, and never competes when the incident shows the
advice done, when the advice is vague or a link, or when a condition of its sentence is
contradicted. Its confidence is capped (``OfflineWeights.advice_confidence_cap``). Real
runbooks are parsed (``tests.support.evidence``); nothing of ours is mocked.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.advice_conditions import MAX_CONDITIONS, conditions_of
from rca.suggestion.checks.urls import urls_in
from rca.suggestion.confidence import load_calibration
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.providers.offline_weights import WEIGHTS
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.validation import validate
from tests.support.evidence import incident_context, message_context

ADVICE = "error-message-names-remedy"
#: A runbook every step of which is written for PyTorch's API only.
TORCH_ONLY = "backward-non-scalar-output"
JAX_FRAME = {
    "filename": "/srv/app/train.py",
    "function": "step",
    "lineno": 12,
    "module": "train",
    "in_app": True,
    "context_line": "grads = jax.grad(loss_fn)(params, batch)",
}
TORCH_FRAME = {**JAX_FRAME, "context_line": "loss = torch.nn.functional.mse_loss(out, y)"}


def _jax_message(option: str = "jax_debug_nans", value: str = "True") -> str:
    return (
        "FloatingPointError: invalid value (nan) encountered in mul. Please set"
        f" `{option}={value}` before tracing, since the check runs only at trace time."
    )


def test_the_messages_advice_wins_when_no_runbook_step_fits() -> None:
    # The top runbook is PyTorch's only: a JAX incident contradicts every step of it.
    ctx = incident_context(_jax_message(), (TORCH_ONLY, 3.0), (ADVICE, 1.0), frames=[JAX_FRAME])
    ranked = rank_steps(ctx)
    assert ranked and ranked[0].advice and ranked[0].evidence.slug == ADVICE
    assert ranked[0].parts == {"advice": WEIGHTS.message_advice}
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == ADVICE
    assert "set `jax_debug_nans=True`" in draft.action
    assert validate(draft, ctx).ok


def test_a_fitting_runbook_step_beats_the_messages_advice() -> None:
    kv = (
        "ValueError: No available memory for the cache blocks. Try increasing"
        " `gpu_memory_utilization` when initializing the engine."
    )
    ctx = message_context(kv, ("vllm-no-memory-cache-blocks", 3.2), (ADVICE, 3.0))
    ranked = rank_steps(ctx)
    assert ranked[0].evidence.slug == "vllm-no-memory-cache-blocks"
    assert any(c.advice for c in ranked)  # it competed, and lost
    assert WEIGHTS.message_advice < WEIGHTS.runbook  # below the top runbook's first step


def test_the_advice_weight_stays_below_a_fitting_step_whatever_the_retrieval_scores() -> None:
    # The advice is not scored by its runbook's retrieval rank: ranked first, it still loses.
    spawn = (
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with"
        " multiprocessing, you must use the 'spawn' start method"
    )
    ctx = message_context(spawn, (ADVICE, 5.0), ("cuda-fork-subprocess-reinit", 4.9))
    ranked = rank_steps(ctx)
    assert ranked[0].evidence.slug == "cuda-fork-subprocess-reinit"
    assert any(c.advice for c in ranked)


def test_advice_the_incident_shows_done_never_competes() -> None:
    message = (
        "RuntimeError: CUDA graph capture failed for the decoder. Please pass `--enforce-eager`"
        " to run without CUDA graphs."
    )
    done = incident_context(
        message,
        (TORCH_ONLY, 3.0),
        (ADVICE, 1.0),
        logs=["$ vllm serve org/model --enforce-eager --port 8000"],
        frames=[JAX_FRAME],
    )
    assert not any(c.advice for c in rank_steps(done))
    not_done = incident_context(
        message,
        (TORCH_ONLY, 3.0),
        (ADVICE, 1.0),
        logs=["$ vllm serve org/model --port 8000"],
        frames=[JAX_FRAME],
    )
    assert rank_steps(not_done)[0].advice


def test_vague_advice_and_links_never_compete() -> None:
    for message in (
        "ValueError: bad configuration for the sampler. Please check your configuration.",
        "ValueError: bad configuration. Make sure the settings are right and try again.",
        "ImportError: the kernel is missing. Please install it from https://example.com/kernels",
        "RuntimeError: bad state. See https://example.com/docs/state for `state_dict` options.",
    ):
        ctx = incident_context(message, (TORCH_ONLY, 3.0), (ADVICE, 1.0), frames=[JAX_FRAME])
        assert not any(c.advice for c in rank_steps(ctx)), message


def test_the_advice_is_never_a_link() -> None:
    message = (
        "FloatingPointError: nan in mul. Please set `jax_debug_nans=True`"
        " (https://example.com/jax/nans) before tracing."
    )
    ctx = incident_context(message, (TORCH_ONLY, 3.0), (ADVICE, 1.0), frames=[JAX_FRAME])
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == ADVICE
    assert not urls_in(f"{draft.action} {draft.reason}")


def test_conditional_advice_the_incident_contradicts_never_competes() -> None:
    message = (
        "RuntimeError: the allocator ran out of memory. If you are using TensorFlow, set"
        " `allow_growth=True` in the session's GPU options."
    )
    torch_ctx = incident_context(message, (ADVICE, 1.0), frames=[TORCH_FRAME])
    assert not any(c.advice for c in rank_steps(torch_ctx))
    tf_frame = {**JAX_FRAME, "context_line": "model = tf.keras.Sequential(layers)"}
    tf_ctx = incident_context(message, (ADVICE, 1.0), frames=[tf_frame])
    assert rank_steps(tf_ctx)[0].advice
    unknown = incident_context(message, (ADVICE, 1.0))  # nothing contradicts the condition
    assert rank_steps(unknown)[0].advice


def test_advice_for_another_device_never_competes() -> None:
    message = (
        "RuntimeError: the kernel failed to launch. When running on CPU, pass"
        " `--dtype=float32` to the server."
    )
    gpu = incident_context(message, (ADVICE, 1.0))
    gpu.inference_context = {"device": "cuda:0"}
    assert not rank_steps(gpu)
    cpu = incident_context(message, (ADVICE, 1.0))
    cpu.inference_context = {"device": "cpu"}
    assert rank_steps(cpu)[0].advice


def test_the_confidence_of_the_messages_advice_is_capped() -> None:
    ctx = incident_context(_jax_message(), (TORCH_ONLY, 3.0), (ADVICE, 1.0), frames=[JAX_FRAME])
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == ADVICE
    assert draft.confidence <= WEIGHTS.advice_confidence_cap
    if WEIGHTS.advice_confidence_cap < load_calibration().threshold:
        assert draft.abstained  # a labelled low-confidence guess, never a confident fix


def test_renamed_options_and_values_keep_the_same_choice() -> None:
    """Metamorphic: the same incident with its option, value and file renamed."""
    choices = []
    for option, value in (("jax_debug_nans", "True"), ("nan_guard_enabled", "1")):
        frame = {**JAX_FRAME, "filename": f"/srv/{option}/train.py"}
        ctx = incident_context(
            _jax_message(option, value), (TORCH_ONLY, 3.0), (ADVICE, 1.0), frames=[frame]
        )
        ranked = rank_steps(ctx)
        choices.append((ranked[0].evidence.slug, ranked[0].position, ranked[0].advice))
        assert f"`{option}={value}`" in ranked[0].action
    assert choices[0] == choices[1]


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=2000))
def test_conditions_of_any_sentence_are_bounded(sentence: str) -> None:
    assert len(conditions_of(sentence)) <= MAX_CONDITIONS


def test_an_adversarial_long_message_is_read_within_bounds() -> None:
    hostile = "If if when unless " * 20_000 + "Please set `x_y=1`. " * 5_000
    ctx = incident_context("RuntimeError: " + hostile, (ADVICE, 1.0))
    ranked = rank_steps(ctx)
    assert len(ranked) <= 1
    assert len(conditions_of(hostile)) <= MAX_CONDITIONS
