"""Framework variants of runbook steps, and the frameworks an incident's text shows.

A step's ``For tensorflow:`` line is the same fix in TensorFlow's API: the incident's
frameworks choose which wording a provider sees, the step keeps its place and premises,
and a suggestion restating the wording written for another framework fails validation.
"""

from __future__ import annotations

from rca.corpus.step_metadata import split_metadata
from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.incident_setting import frameworks_in, read_setting
from rca.suggestion.premises import contradictions, read_premises, restated_step
from rca.suggestion.providers import Draft
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.step_values import choose_variant, fill_values, step_wordings

STEP = """**Train in mixed precision (`torch.autocast`).** Reason: half the memory.
   Applies: {mode: training, api: [pytorch]}
   For tensorflow: **Set the `mixed_float16` policy (`tf.keras.mixed_precision.set_global_policy`).** Reason: half the memory in Keras.
   For jax, paddle: **Cast the parameters to `jnp.bfloat16`.** Reason: half the memory in JAX.
   For example: this line is ordinary text."""  # noqa: E501


def _evidence() -> Evidence:
    text, meta = split_metadata(STEP)
    other, plain = split_metadata("**Lower the batch size.** Reason: activations shrink.")
    return Evidence(
        slug="mixed",
        title="Mixed precision",
        failure_class="cuda_oom",
        text="",
        remediation=(text, other),
        score=1.0,
        applies=(meta, plain),
    )


def _ctx(error_type: str, message: str) -> AnalysisContext:
    return AnalysisContext(error_type=error_type, message=message, evidence=[_evidence()])


def test_variant_lines_become_metadata_and_unknown_names_stay_text() -> None:
    text, meta = split_metadata(STEP)
    assert meta.api == ("pytorch",)
    assert meta.variants == ("tensorflow", "jax", "paddle")
    assert "For example: this line is ordinary text." in choose_variant(text, set())


def test_the_incidents_framework_chooses_the_wording() -> None:
    text, _ = split_metadata(STEP)
    assert choose_variant(text, {"tensorflow"}).startswith("**Set the `mixed_float16` policy")
    assert choose_variant(text, {"paddle"}).startswith("**Cast the parameters")
    own = choose_variant(text, {"pytorch"})
    assert own == choose_variant(text, set())
    assert own.startswith("**Train in mixed precision") and "For tensorflow" not in own
    assert fill_values(text, {"framework": "jax"}).startswith("**Cast the parameters")
    assert [names for names, _ in step_wordings(text)] == [(), ("tensorflow",), ("jax", "paddle")]


def test_a_numbered_section_gets_each_step_worded() -> None:
    section = "Fixes\n\n1. " + split_metadata(STEP)[0] + "\n2. **Lower the batch size.**"
    worded = choose_variant(section, {"tensorflow"})
    assert worded.startswith("Fixes\n\n1. **Set the `mixed_float16` policy")
    assert worded.endswith("\n2. **Lower the batch size.**")


def test_a_tensorflow_incident_gets_the_tensorflow_wording_in_the_steps_place() -> None:
    ctx = _ctx(
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError",
        "OOM when allocating tensor with shape[64,512,512]",
    )
    # A Keras training loop's frame: the step is marked for training, and an incident that
    # does not tell its setting ranks a step for either setting first.
    ctx.frames = [
        {
            "filename": "/srv/job/train.py",
            "function": "main",
            "lineno": 41,
            "module": "",
            "in_app": True,
            "context_line": "model.fit(dataset, epochs=10)",
        }
    ]
    premises = read_premises(ctx)
    assert premises.frameworks == {"tensorflow"}
    assert contradictions(_evidence().applies[0], premises) == []
    ranked = rank_steps(ctx)
    assert ranked[0].position == 0
    assert ranked[0].action.startswith("Set the `mixed_float16` policy")
    assert all("torch" not in candidate.action for candidate in ranked)


def test_a_framework_without_a_variant_is_still_ruled_out_by_the_api_premise() -> None:
    ctx = _ctx("RuntimeError", "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : out of memory")
    assert read_premises(ctx).frameworks == {"onnxruntime"}
    assert [candidate.position for candidate in rank_steps(ctx)] == [1]


def test_restating_another_frameworks_wording_is_contradicted() -> None:
    ctx = _ctx("jaxlib.xla_extension.XlaRuntimeError", "RESOURCE_EXHAUSTED: Out of memory")
    premises = read_premises(ctx)
    torch_draft = Draft("Train in mixed precision (`torch.autocast`).", "r", "mixed", 0.5, "", "")
    meta = restated_step(torch_draft, ctx)
    assert meta is not None and meta.api == ("pytorch",)
    assert contradictions(meta, premises)
    jax_draft = Draft("Cast the parameters to `jnp.bfloat16`.", "r", "mixed", 0.5, "", "")
    meta = restated_step(jax_draft, ctx)
    assert meta is not None and meta.api == ("jax", "paddle")
    assert not contradictions(meta, premises)


def test_frameworks_from_aliases_logger_tags_versions_and_tools() -> None:
    assert frameworks_in(["y = jnp.where(x > 0, x, 0)"]) == {"jax"}
    assert frameworks_in(["[02/03/2022-06:14:51] [E] [TRT] ModelImporter.cpp:726"]) == {"tensorrt"}
    assert frameworks_in(["[ONNXRuntimeError] : 1 : FAIL"]) == {"onnxruntime"}
    assert frameworks_in(["ERROR: No matching distribution for jaxlib==0.4.29"]) == {"jax"}
    assert frameworks_in(["**TensorRT Version**: TensorRT-8.5.1.7"]) == {"tensorrt"}
    assert frameworks_in(["keras                        3.10.0"]) == {"tensorflow"}
    assert frameworks_in(["trtexec --onnx=model.onnx --fp16"]) == {"tensorrt"}
    assert frameworks_in(["W tensorflow/core/common_runtime/bfc_allocator.cc:457] x"]) == {
        "tensorflow"
    }
    assert frameworks_in(["/onnxruntime_src/onnxruntime/core/session/x.cc"]) == {"onnxruntime"}
    # Prose naming a framework, or a version in a sentence, is not code.
    assert frameworks_in(["we moved from TensorFlow 2 to jax last year"]) == set()
    assert read_setting("UnknownError", "Failed to get convolution algorithm").frameworks == {
        "tensorflow"
    }
    assert read_setting("none (TensorRT error log)", "x").frameworks == {"tensorrt"}
