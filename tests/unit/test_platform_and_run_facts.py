"""Facts the last holdout judging found unread (issue 16): training vs serving, SIGILL, custom
ONNX operators, a GPU build whose CUDA libraries did not load.

Each fact is read from the incident's own text (message, frames, logs, inference context)
and decides which runbook steps can be the action: a step marked ``mode: training`` is no
fix for a serving run (and the reverse), a memory step is no fix for an illegal instruction,
an opset or type-cast step is no fix for a custom operator, and "install the GPU build" is
no fix when the GPU build is there and its libraries failed to load.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.corpus.step_metadata import FACTS, StepMetadata
from rca.suggestion.platform_facts import platform_facts, unregistered_operators
from rca.suggestion.premises import contradictions, read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.training_or_serving import mode_contradictions, run_kind
from tests.support.evidence import incident_context, message_context

_OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"


def _frame(function: str, line: str, filename: str = "app.py") -> dict[str, object]:
    return {
        "filename": filename,
        "function": function,
        "lineno": 1,
        "module": "",
        "in_app": True,
        "context_line": line,
    }


# --------------------------------------------------------------------- training or serving


@pytest.mark.parametrize(
    ("frames", "logs"),
    [
        ([_frame("train", "loss.backward()")], []),
        ([_frame("main", "trainer.train()")], []),
        ([_frame("_inner_training_loop", "tr_loss_step = self.training_step(model, inputs)")], []),
        ([_frame("step", "x = 1", "/site-packages/transformers/trainer.py")], []),
        ([], ["Epoch 3/10", "1875/1875 [====] - loss: 0.2931"]),
        ([], ["{'loss': 1.23, 'grad_norm': 0.8, 'learning_rate': 2e-05, 'epoch': 0.1}"]),
        ([_frame("main", "model.fit(x_train, y_train, epochs=5)")], []),
        ([], ["python scripts/train.py --cfg experiments/mpii/train.yaml"]),
    ],
)
def test_a_training_loop_is_read_from_frames_code_and_logs(
    frames: list[dict[str, object]], logs: list[str]
) -> None:
    assert run_kind(_OOM, frames, logs) == "training"


@pytest.mark.parametrize(
    ("frames", "logs", "context"),
    [
        ([_frame("main", "out = model.generate(**inputs, max_new_tokens=256)")], [], {}),
        (
            [_frame("forward", "x", "/usr/lib/python3/site-packages/vllm/worker/model_runner.py")],
            [],
            {},
        ),
        ([], ['INFO:     127.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 500'], {}),
        ([_frame("main", "preds = model.predict(batch)")], [], {}),
        ([], [], {"request_id": "abc", "batch_size": 4}),
        ([], ["INFO 05-01 llm_engine.py:72] Initializing an LLM engine with config"], {}),
    ],
)
def test_a_serving_path_is_read_from_frames_logs_and_inference_context(
    frames: list[dict[str, object]], logs: list[str], context: dict[str, object]
) -> None:
    assert run_kind(_OOM, frames, logs, context) == "serving"


def test_both_sides_or_neither_give_no_fact() -> None:
    both = [_frame("train", "loss.backward()"), _frame("evaluate", "model.generate(ids)")]
    assert run_kind(_OOM, both, []) is None
    assert run_kind(_OOM, [], []) is None
    # Words about training in prose are no training loop: "backward" without a call.
    assert run_kind("RuntimeError: during backward pass, memory ran out", [], []) is None


def test_a_step_for_the_other_setting_is_contradicted_and_an_unknown_contradicts_nothing() -> None:
    training_step = StepMetadata(mode="training")
    serving_step = StepMetadata(mode="serving")
    assert mode_contradictions("training", frozenset({"runs-serving"}))
    assert not mode_contradictions("training", frozenset({"runs-training"}))
    assert not mode_contradictions("serving", frozenset())
    ctx = incident_context(_OOM, frames=[_frame("main", "model.generate(ids)")])
    premises = read_premises(ctx)
    assert "runs-serving" in premises.facts
    assert contradictions(training_step, premises)
    assert not contradictions(serving_step, premises)


def test_a_training_oom_gets_a_training_step_and_a_serving_oom_a_serving_one() -> None:
    runbooks = (("cuda-oom-inference", 0.9), ("cuda-oom-training", 0.85))
    training = incident_context(_OOM, *runbooks, frames=[_frame("train", "loss.backward()")])
    serving = incident_context(
        _OOM, *runbooks[::-1], frames=[_frame("main", "out = model.generate(ids)")]
    )
    assert OfflineProvider().suggest(training).runbook == "cuda-oom-training"
    assert OfflineProvider().suggest(serving).runbook == "cuda-oom-inference"


# --------------------------------------------------------------------- illegal instruction


@pytest.mark.parametrize(
    "line",
    [
        "Illegal instruction (core dumped)",
        "Error: llama runner process has terminated: signal: illegal instruction (core dumped)",
        "SIGILL: illegal instruction",
        "traps: ollama-runner[1485327] trap invalid opcode ip:5012fc sp:7ffd01fd2090 error:0",
        "The TensorFlow library was compiled to use AVX instructions, but these aren't available"
        " on your machine.",
    ],
)
def test_an_illegal_instruction_is_a_cpu_feature_fact(line: str) -> None:
    assert "cpu-instruction-missing" in platform_facts([line])


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: CUDA error: an illegal instruction was encountered",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "Killed",
    ],
)
def test_a_gpu_kernel_fault_or_a_kill_is_no_cpu_feature_fact(line: str) -> None:
    assert "cpu-instruction-missing" not in platform_facts([line])


def test_an_ollama_sigill_is_not_answered_with_less_memory() -> None:
    ctx = message_context(
        "Error: llama runner process has terminated: signal: illegal instruction (core dumped)",
        ("ollama-runner-terminated", 0.9),
    )
    action = OfflineProvider().suggest(ctx).action
    assert "AVX" in action
    assert "num_ctx" not in action


# --------------------------------------------------------------------- custom operators


@pytest.mark.parametrize(
    ("line", "operator"),
    [
        ("Fatal error: my_ops:Inverse2(-1) is not a registered function/op", "my_ops:Inverse2"),
        (
            "Fatal error: com.microsoft:Reduction_dd(-1) is not a registered function/op",
            "com.microsoft:Reduction_dd",
        ),
        ("Fatal error: _DCNv2 is not a registered function/op", "_DCNv2"),
        (
            "No Op registered for ModulatedDeformConvFunction with domain_version of 12",
            "ModulatedDeformConvFunction",
        ),
        ("Could not find an implementation for GridSampler(1) node with name 'g'", "GridSampler"),
        ("Could not find an implementation for the node /blocks/0/MyOp_3:MyOp(1)", "MyOp"),
    ],
)
def test_an_operator_outside_the_standard_domains_is_a_custom_operator(
    line: str, operator: str
) -> None:
    assert unregistered_operators([line]) == [operator]
    assert "custom-operator-unregistered" in platform_facts([line])


@pytest.mark.parametrize(
    "line",
    [
        "NOT_IMPLEMENTED : Could not find an implementation for OneHot(11) node with name 'O'",
        "No Op registered for LayerNormalization with domain_version of 11",
        "Could not find an implementation for ai.onnx.ml:TreeEnsembleClassifier(3) node",
        "Fatal error: Resize is not a registered function/op",
        # Older releases name the node before its type: "NAME:OpType(N)", no domain.
        "NOT_IMPLEMENTED : Could not find an implementation for the node Relu:Relu(6)",
        "Could not find an implementation for the node LgbmRegressor:TreeEnsembleRegressor(1)",
        "Could not find an implementation for the node Tile(1)",
    ],
)
def test_a_standard_operator_at_the_wrong_opset_or_type_is_no_custom_operator(line: str) -> None:
    assert "custom-operator-unregistered" not in platform_facts([line])


def test_a_custom_operator_is_not_answered_with_an_opset_or_a_cast() -> None:
    ctx = message_context(
        "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL :"
        " Load model from m.onnx failed:Fatal error: my_ops:MyOp(-1) is not a registered"
        " function/op",
        ("onnxruntime-not-implemented-node", 0.9),
    )
    assert "register_custom_ops_library" in OfflineProvider().suggest(ctx).action


# --------------------------------------------------------------------- GPU libraries


@pytest.mark.parametrize(
    "lines",
    [
        [
            "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic"
            " library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object"
        ],
        [
            "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU"
            " libraries. Skipping registering GPU devices..."
        ],
        [
            "[E:onnxruntime:Default, provider_bridge_ort.cc:1546 TryGetProviderInfo_CUDA] Failed to"
            " load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11"
        ],
        ["torch 2.1.0+cu121", "torch.cuda.is_available() returns False"],
    ],
)
def test_a_gpu_build_whose_libraries_did_not_load_is_read(lines: list[str]) -> None:
    assert "gpu-libraries-not-loaded" in platform_facts(lines)


@pytest.mark.parametrize(
    "lines",
    [
        ["Failed to create CUDAExecutionProvider. Please reference the requirements"],
        ["torch.cuda.is_available() returns False"],
        ["torch 2.1.0+cpu", "torch.cuda.is_available() False"],
        ["Successfully opened dynamic library libcudart.so.11.0"],
    ],
)
def test_a_shadowed_or_cpu_build_is_not_read_as_libraries_missing(lines: list[str]) -> None:
    assert "gpu-libraries-not-loaded" not in platform_facts(lines)


def test_the_gpu_package_is_not_reinstalled_when_its_libraries_failed_to_load() -> None:
    ctx = message_context(
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1546 TryGetProviderInfo_CUDA] Failed to"
        " load library libonnxruntime_providers_cuda.so with error: libcudnn_adv.so.9: cannot"
        " open shared object file: No such file or directory",
        ("onnxruntime-cuda-provider-missing", 0.9),
    )
    action = OfflineProvider().suggest(ctx).action
    assert not action.startswith("Uninstall")
    assert "cuDNN" in action or "cudnn" in action


# --------------------------------------------------------------------- untrusted text


def test_every_new_fact_has_a_description() -> None:
    for name in (
        "runs-training",
        "runs-serving",
        "cpu-instruction-missing",
        "custom-operator-unregistered",
        "gpu-libraries-not-loaded",
    ):
        assert FACTS[name]


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=3000),
    st.lists(st.text(max_size=200), max_size=5),
    st.dictionaries(st.text(max_size=30), st.text(max_size=30), max_size=5),
)
def test_the_readers_take_any_text(message: str, lines: list[str], context: dict) -> None:
    frames = [_frame(line[:40], line) for line in lines]
    assert run_kind(message, frames, lines, context) in (None, "training", "serving")
    facts = platform_facts([message, *lines])
    assert facts <= {
        "cpu-instruction-missing",
        "custom-operator-unregistered",
        "gpu-libraries-not-loaded",
    }


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,
        "Could not find an implementation for " + "x" * 500_000 + "(1",
        ("No Op registered for " + "_" * 1000 + " ") * 500,
        "epoch " + "1" * 200_000 + " loss",
        ("illegal " * 100_000) + "instruction was encountered",
        ":" * 500_000 + " is not a registered function/op",
        "Could not find an implementation for the node " + "a:" * 250_000 + "(1",
    ],
)
def test_adversarial_text_is_read_in_linear_time(text: str) -> None:
    platform_facts([text, text])
    run_kind(text, [_frame(text[:5000], text)], [text], {text[:80]: text})


@pytest.mark.parametrize(
    ("line", "operator"),
    [
        ("Could not find an implementation for the node Relu:Relu(6)", "Relu"),
        ("Could not find an implementation for the node output:Cos(7)", "Cos"),
        ("Could not find an implementation for the node /model/a:b:Conv(11)", "Conv"),
        ("Could not find an implementation for the node Tile(1)", "Tile"),
    ],
)
def test_the_node_name_before_the_colon_is_no_domain(line: str, operator: str) -> None:
    assert unregistered_operators([line]) == [operator]
