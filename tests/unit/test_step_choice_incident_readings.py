"""Four readings of the incident that move the offline step choice, each on a dev case and
on the same failure reworded (other names, numbers and packages):

- the message points at an option (its advice, or a setting it reports): the runbook step
  naming that option is chosen over a first step naming another (:mod:`.message_names`);
- the logs show a package just installed from its repository's tip or with ``-U``: a step
  that only upgrades it again does not compete (:mod:`rca.suggestion.fresh_installs`);
- the incident shows Keras 3: the Keras 2 ``load_weights(by_name=True,
  skip_mismatch=True)`` step is ruled out (``keras-3-in-use``);
- the incident says an earlier release worked: "the model does not fit" steps (tensor
  parallelism, a quantized or smaller model) are ruled out (``earlier-release-worked``).

Each context holds the runbooks retrieval ranked for the dev case, with their scores.
"""

from __future__ import annotations

from typing import Any

import pytest

from rca.evaluation.suite import realworld_dev_cases
from rca.suggestion.context import AnalysisContext
from rca.suggestion.fresh_installs import fresh_packages
from rca.suggestion.keras_major import keras_major_facts
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.providers.message_names import message_option_names, points_at
from rca.suggestion.release_regression import release_regression_facts
from tests.support.evidence import message_context
from tests.support.linear_time import assert_linear


def _dev(case_id: str) -> dict[str, Any]:
    return next(c for c in realworld_dev_cases() if c["id"] == case_id)


def _action(message: str, ranked: tuple[tuple[str, float], ...], logs: tuple[str, ...]) -> str:
    ctx: AnalysisContext = message_context(message, *ranked, logs=logs)
    return OfflineProvider().suggest(ctx).action


HEAD_SIZE = (
    ("checkpoint-size-mismatch-head", 0.911),
    ("checkpoint-partial-load-new-head", 0.905),
    ("checkpoint-size-mismatch-vocab", 0.771),
)
HEAD_SIZE_VARIANT = (
    "RuntimeError: Error(s) in loading state_dict for RobertaForSequenceClassification:\n"
    "\tsize mismatch for classifier.out_proj.weight: copying a param with shape"
    " torch.Size([12, 1024]) from checkpoint, the shape in current model is"
    " torch.Size([3, 1024]).\n"
    "\tYou may consider adding `ignore_mismatched_sizes=True` in the model `from_pretrained`"
    " method."
)


@pytest.mark.parametrize("message", [_dev("ra061")["message"], HEAD_SIZE_VARIANT])
def test_the_step_naming_the_option_the_message_advises_is_chosen(message: str) -> None:
    action = _action(message, HEAD_SIZE, ())
    assert "ignore_mismatched_sizes" in action


NO_GPU = (
    ("cuda-not-available-cpu-build", 0.866),
    ("vllm-device-type-not-inferred", 0.621),
    ("cuda-invalid-device-ordinal", 0.559),
)
NO_GPU_VARIANT = (
    "When the Ray Serve replica starts, its actor sets CUDA_VISIBLE_DEVICES=3, and"
    " torch.cuda.is_available() returns False inside it."
)


@pytest.mark.parametrize("message", [_dev("raq015")["message"], NO_GPU_VARIANT])
def test_the_step_naming_the_variable_the_message_reports_set_is_chosen(message: str) -> None:
    action = _action(message, NO_GPU, ())
    assert "CUDA_VISIBLE_DEVICES" in action


JAX_LIBRARY = (
    ("jax-ecosystem-library-version-pairing", 0.847),
    ("version-api-changed-signature", 0.471),
)
JAX_VARIANT = (
    "AttributeError: module 'jax.interpreters.batching' has no attribute 'MapSpecV2'",
    ("!pip install -q --upgrade dm-haiku", "import haiku"),
)


@pytest.mark.parametrize(
    ("message", "logs"),
    [(_dev("rg011")["message"], tuple(_dev("rg011")["logs"])), JAX_VARIANT],
)
def test_a_library_installed_from_its_tip_is_not_upgraded_again(
    message: str, logs: tuple[str, ...]
) -> None:
    action = _action(message, JAX_LIBRARY, logs)
    assert "`jax`" in action and "jaxlib" in action
    assert "pip install -U" not in action


def test_fresh_installs_read_tips_and_upgrades_not_pins() -> None:
    assert fresh_packages(["pip install git+https://github.com/org/some-lib.git"]) == {"some-lib"}
    assert fresh_packages(["pip install -U peft accelerate==0.30 --pre"]) == {"peft"}
    assert fresh_packages(["pip install git+https://github.com/org/lib.git@v1.2"]) == set()
    assert fresh_packages(["pip install peft"]) == set()


KERAS_LOAD = (
    ("keras-load-weights-layer-count", 0.864),
    ("tf-input-shape-batch-dim", 0.463),
)
KERAS_VARIANT = (
    "ValueError: A total of 2 objects could not be loaded. Example error message for object"
    " <GRUCell name=gru_cell_1, built=True>:\n\nLayer 'gru_cell_1' expected 3 variables, but"
    " received 0 variables during loading. Expected: ['kernel', 'recurrent_kernel', 'bias']",
    ("keras==3.0.5", "model = keras.saving.load_model('tagger.keras')"),
)


@pytest.mark.parametrize(
    ("message", "logs"),
    [(_dev("ram007")["message"], tuple(_dev("ram007")["logs"])), KERAS_VARIANT],
)
def test_keras_2_loading_by_name_is_not_suggested_under_keras_3(
    message: str, logs: tuple[str, ...]
) -> None:
    action = _action(message, KERAS_LOAD, logs)
    assert "by_name" not in action and "skip_mismatch" not in action


def test_keras_3_is_read_from_its_version_or_its_layer_repr_not_from_tf_keras() -> None:
    assert keras_major_facts(["tensorflow 2.16.1 and keras 3.1.1"]) == {"keras-3-in-use"}
    assert keras_major_facts(["<Dense name=dense, built=False>"]) == {"keras-3-in-use"}
    assert keras_major_facts(["tf_keras 2.16.0", "keras==2.15.0"]) == set()


VLLM_OOM = (
    ("vllm-engine-cuda-oom", 0.829),
    ("cuda-oom-model-too-large", 0.783),
    ("cuda-oom-diffusers-pipeline", 0.779),
    ("cuda-oom-training", 0.708),
    ("cuda-oom-inference", 0.69),
)
VLLM_VARIANT = (
    "out of memory serving qwen awq model with vllm 0.4.2",
    ("Qwen1.5-14B-Chat-AWQ runs fine on vllm 0.4.1, but the server OOMs with 0.4.2 on one L4.",),
)


@pytest.mark.parametrize(
    ("message", "logs"),
    [(_dev("rb051")["message"], tuple(_dev("rb051")["logs"])), VLLM_VARIANT],
)
def test_a_release_regression_is_not_answered_as_a_model_too_large(
    message: str, logs: tuple[str, ...]
) -> None:
    action = _action(message, VLLM_OOM, logs)
    assert "tensor-parallel" not in action and "smaller model" not in action


def test_a_regression_needs_a_later_failing_release() -> None:
    worked = "it worked with diffusers 0.25.0, fails with 0.26.1"
    assert release_regression_facts([worked]) == {"earlier-release-worked"}
    assert release_regression_facts(["works in 2.0 but not in 1.9"]) == set()


def test_the_option_is_what_the_advice_changes_not_where_and_not_a_cautioned_use() -> None:
    ctx = message_context(
        "RuntimeError: Error(s) in loading state_dict. You may consider adding"
        " `ignore_mismatched_sizes=True` in the model `from_pretrained` method. Try increasing"
        " `gpu_memory_utilization` or decreasing `max_model_len`."
    )
    pointed = message_option_names(ctx)
    assert {"ignore_mismatched_sizes", "gpu_memory_utilization", "max_model_len"} <= set(pointed)
    assert "from_pretrained" not in pointed
    assert points_at("Pass `ignore_mismatched_sizes=True` with `num_labels`.", pointed)
    assert not points_at("Pass `ignore_mismatched_sizes=False`.", pointed)  # not the advice
    cautioned = "Use `retain_graph=True` only when two backward passes are intended."
    assert not points_at(cautioned, {"retain_graph": None})


def test_the_readings_are_linear() -> None:
    def read(size: int) -> object:
        line = "works in 1.0 " * size + "pip install -U " + "a " * size + "keras " * size
        ctx = message_context("You may consider adding `x_y=1` in " + "the `a_b` " * size)
        return (
            fresh_packages([line]),
            release_regression_facts([line]),
            keras_major_facts([line]),
            message_option_names(ctx),
        )

    assert_linear(read, 20, 400)
