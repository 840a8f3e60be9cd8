"""No step does what the incident already shows done as a list value or a tensor's state
(issue 16, harm class 2).

The forms a reader misses: a value already in a shown list (``providers=[...]`` in a log
line, ``--lora_target q_proj,v_proj`` on the launch command, ``CUDA_VISIBLE_DEVICES=0,1``),
and a tensor already on the device, of the dtype or with the rank a step asks for
(``Input type (torch.cuda.FloatTensor)``, "the dtype of input is torch.float32", a shape diff
of full rank). Synthetic incidents through the real validator and offline provider; the
readers take untrusted text, so Hypothesis checks them on any input and long adversarial
inputs for linear time.
"""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.premises import option_contradictions, read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.shown_options import list_items, read_shown_options, reported
from rca.suggestion.shown_tensors import read_shown_tensors
from rca.suggestion.step_additions import additions
from rca.suggestion.step_options import options_set_by
from rca.suggestion.step_tensors import repeated_tensor_targets, tensor_targets
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context

ORT_WARNING = (
    "Failed to create CUDAExecutionProvider. Please reference"
    " https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements"
    " to ensure all dependencies are met."
)
ORT_SESSION = (
    "sess = ort.InferenceSession(path, providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])"
)
ORT_EXAMPLE = (
    "ValueError: This ORT build has ['AzureExecutionProvider', 'CPUExecutionProvider'] enabled."
    " Since ORT 1.9, you are required to explicitly set the providers parameter when"
    " instantiating InferenceSession. For example, onnxruntime.InferenceSession(...,"
    " providers=['AzureExecutionProvider', 'CPUExecutionProvider'], ...)"
)
INPUT_ON_GPU = (
    "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor)"
    " should be the same"
)
INPUT_ON_CPU = (
    "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor)"
    " should be the same"
)
FULL_RANK = (
    "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[1, 1, 224, 224]"
    " to have 3 channels, but got 1 channels instead"
)
LORA = (
    "ValueError: Target modules {'q_proj', 'v_proj'} not found in the base model. Please check"
    " the target modules and try again."
)


def test_a_shown_list_is_read_as_its_items() -> None:
    shown = read_shown_options(
        "x",
        [
            ORT_SESSION,
            "CUDA_VISIBLE_DEVICES=0,1 python train.py --lora_target q_proj,v_proj",
            'config: {"target_modules": ["q_proj", "v_proj"], "r": 8}',
            "target_modules: [q_proj, k_proj]",
        ],
    ).options
    assert list_items(shown["providers"][1]) == ("cudaexecutionprovider", "cpuexecutionprovider")
    assert list_items(shown["cuda_visible_devices"][1]) == ("0", "1")
    assert list_items(shown["lora_target"][1]) == ("q_proj", "v_proj")
    assert list_items(shown["target_modules"][1]) == ("q_proj", "v_proj")  # the first shown


def test_an_example_in_the_message_shows_nothing_set() -> None:
    assert "providers" not in read_shown_options(ORT_EXAMPLE).options
    assert "For example" not in reported("It failed. For example, x=[1, 2] works.")


def test_a_step_that_adds_a_value_names_the_list_and_the_values() -> None:
    (added,) = options_set_by("Add `CUDAExecutionProvider` to `providers` when creating it.")
    assert (added.key, added.adds) == ("providers", ("cudaexecutionprovider",))
    (lora,) = options_set_by("Include q_proj and v_proj in the LoRA config's `target_modules`.")
    assert (lora.key, lora.adds) == ("target_modules", ("q_proj", "v_proj"))
    # A flag added to a command is an option itself; plain words add nothing to a list.
    (flag,) = options_set_by("Add `--trust-remote-code` to the launch command.")
    assert (flag.key, flag.adds) == ("trust_remote_code", ())
    assert not additions("Add a batch dimension to the input.")
    (listed,) = options_set_by(
        'Pass `providers=["CUDAExecutionProvider", "CPUExecutionProvider"]`.'
    )
    assert list_items(listed.value or "") == ("cudaexecutionprovider", "cpuexecutionprovider")
    (env,) = options_set_by("Set `CUDA_VISIBLE_DEVICES=0,1` before launching.")
    assert env.value == "0,1"


def test_adding_a_value_the_shown_list_holds_is_a_repeat() -> None:
    ctx = message_context(
        ORT_WARNING, ("onnxruntime-cuda-provider-missing", 0.9), logs=(ORT_SESSION,)
    )
    premises = read_premises(ctx)
    again = "Add `CUDAExecutionProvider` to `providers` when creating the session."
    assert option_contradictions(again, premises)
    assert not validate(draft(again, "onnxruntime-cuda-provider-missing"), ctx).premises_ok
    other = "Add `TensorrtExecutionProvider` to `providers` before the CUDA one."
    assert not option_contradictions(other, premises)
    same = 'Pass `providers=["CUDAExecutionProvider", "CPUExecutionProvider"]`.'
    assert option_contradictions(same, premises)
    reordered = 'Pass `providers=["CPUExecutionProvider", "CUDAExecutionProvider"]`.'
    assert not option_contradictions(reordered, premises)  # the order is the priority
    plain = read_premises(message_context(ORT_WARNING, ("onnxruntime-cuda-provider-missing", 0.9)))
    assert not option_contradictions(again, plain)


def test_lora_targets_on_the_launch_command_are_not_suggested_again() -> None:
    command = "python src/train_bash.py --finetuning_type lora --lora_target q_proj,v_proj"
    ctx = message_context(LORA, ("peft-target-modules-not-found", 0.9), logs=(command,))
    premises = read_premises(ctx)
    assert option_contradictions("Add `q_proj` and `v_proj` to `--lora_target`.", premises)
    assert not option_contradictions("Set `--lora_target query_key_value`.", premises)
    assert not option_contradictions("Add `query_key_value` to `--lora_target`.", premises)


def test_a_device_list_already_set_is_a_repeat_in_that_order_only() -> None:
    ctx = message_context(
        "NCCL timeout",
        ("nccl-p2p-hang-single-node", 0.9),
        logs=("$ CUDA_VISIBLE_DEVICES=0,1 python a.py",),
    )
    premises = read_premises(ctx)
    assert option_contradictions("Set `CUDA_VISIBLE_DEVICES=0,1`.", premises)
    assert not option_contradictions("Set `CUDA_VISIBLE_DEVICES=1,0`.", premises)
    assert not option_contradictions("Set `CUDA_VISIBLE_DEVICES=0`.", premises)


def test_the_type_pair_shows_each_side_s_device_and_dtype() -> None:
    shown = read_shown_tensors(INPUT_ON_GPU)
    assert (shown["input"].device, shown["input"].dtype) == ("cuda", "float32")
    assert (shown["model"].device, shown["model"].dtype) == ("cpu", "float32")
    logged = read_shown_tensors("x", ["The  dtype of input is torch.float32", "x.device: cuda:1"])
    assert (logged["input"].dtype, logged["input"].device) == ("float32", "cuda:1")
    advised = read_shown_tensors("You should make sure the input is on cuda.")
    assert "input" not in advised


def test_the_prompt_s_facts_say_what_each_tensor_already_is() -> None:
    lines = read_premises(
        message_context(INPUT_ON_GPU, ("device-mismatch-input-weight-type", 0.9))
    ).as_lines()
    assert any(line.startswith("already so: the input is on cuda, float32") for line in lines)
    assert any(line.startswith("already so: the model is on cpu, float32") for line in lines)


def test_moving_a_tensor_to_the_device_it_is_on_is_a_repeat() -> None:
    for message, repeated, needed in (
        (
            INPUT_ON_GPU,
            "Move the input to the GPU (`x = x.to('cuda')`).",
            "Move the model to the GPU.",
        ),
        (
            INPUT_ON_CPU,
            "Move the model to the GPU with `model.cuda()`.",
            "Move the inputs to `cuda`.",
        ),
    ):
        ctx = message_context(message, ("device-mismatch-input-weight-type", 0.9))
        premises = read_premises(ctx)
        assert option_contradictions(repeated, premises), repeated
        assert not option_contradictions(needed, premises), needed
        assert not validate(draft(repeated, "device-mismatch-input-weight-type"), ctx).premises_ok
    # "to the model's device" resolves against what the message shows of the model.
    both_gpu = (
        "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type"
        " (torch.cuda.HalfTensor) should be the same"
    )
    premises = read_premises(message_context(both_gpu, ("dtype-mismatch-half-float", 0.9)))
    assert option_contradictions("Move the input batch to the model's device.", premises)
    assert not option_contradictions(
        "Cast inputs to the model's dtype (`x.to(model.dtype)`).", premises
    )


def test_casting_an_input_to_the_dtype_it_has_is_a_repeat() -> None:
    ctx = message_context(
        "RuntimeError: expected scalar type Float but found Double",
        ("dtype-mismatch-half-float", 0.9),
        logs=("The  dtype of input is torch.float32",),
    )
    premises = read_premises(ctx)
    assert option_contradictions("Cast the input to `float32` with `x.float()`.", premises)
    assert not option_contradictions("Cast the input to `torch.float64` (`x.double()`).", premises)
    assert not option_contradictions("Cast the model to float32 with `model.float()`.", premises)


def test_adding_a_batch_axis_is_no_fix_when_the_input_has_full_rank() -> None:
    slug = "conv-channel-mismatch-layout"
    ctx = message_context(FULL_RANK, (slug, 0.9))
    assert read_premises(ctx).tensors["input"].shape == (1, 1, 224, 224)
    axis = draft("Add a batch dimension for a single image with `x.unsqueeze(0)`.", slug)
    assert not validate(axis, ctx).premises_ok
    assert "unsqueeze(0)" not in OfflineProvider().suggest(ctx).action
    missing = message_context(
        "RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input"
        " of size: [224, 224]",
        (slug, 0.9),
    )
    assert validate(axis, missing).premises_ok


def test_a_new_axis_must_give_the_shape_the_weight_needs() -> None:
    """PyTorch's rank message: [128, 256, 256] for a 1-channel weight has its batch axis and
    lacks the channel one; [3, 256, 256] for a 3-channel weight is one unbatched image."""
    batch = "Add a batch dimension for a single image with `x.unsqueeze(0)`."
    channel = "Add the channel axis with `x.unsqueeze(1)`."
    grayscale = read_shown_tensors(
        "RuntimeError: Expected 4-dimensional input for 4-dimensional weight 64 1 4 4, but got"
        " 3-dimensional input of size [128, 256, 256] instead"
    )
    assert grayscale["input"].expected == (None, 1, None, None)
    assert repeated_tensor_targets(batch, grayscale)
    assert not repeated_tensor_targets(channel, grayscale)
    single = read_shown_tensors(
        "RuntimeError: Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but"
        " got 3-dimensional input of size [3, 224, 224] instead"
    )
    assert not repeated_tensor_targets(batch, single)
    assert repeated_tensor_targets(channel, single)


def test_moving_channels_first_is_no_fix_when_they_already_are() -> None:
    permute = "Permute images from HWC to CHW (`x.permute(0, 3, 1, 2)` for batches)."
    chw = read_shown_tensors(
        "RuntimeError: Expected 4-dimensional input for 4-dimensional weight 3 3 1 1, but got"
        " 3-dimensional input of size [3, 256, 256] instead"
    )
    assert repeated_tensor_targets(permute, chw)
    hwc = read_shown_tensors(
        "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected"
        " input[1, 224, 224, 3] to have 3 channels, but got 224 channels instead",
        shape_diff=[
            {
                "tensor": "input",
                "op": "conv",
                "expected": [1, 3, 224, 3],
                "actual": [1, 224, 224, 3],
            }
        ],
    )
    assert not repeated_tensor_targets(permute, hwc)


def test_steps_name_their_tensor_targets_from_their_own_words() -> None:
    assert {
        (t.role, t.kind, t.value) for t in tensor_targets("Cast inputs to the model's dtype.")
    } == {("input", "dtype", "@model")}
    assert {(t.role, t.kind, t.value) for t in tensor_targets("`x = x.view(1, 3, 224, 224)`")} == {
        ("input", "shape", "1,3,224,224")
    }
    assert not tensor_targets("Convert the model to ONNX with opset 17.")
    assert not repeated_tensor_targets("Move the input to the GPU.", {})


_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=400) | st.text(
    alphabet="add to in `'\"[](),=:._-xinput cuda float Tensor type dtype of is on ", max_size=400
)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_any_text_gives_an_answer(text: str) -> None:
    read_shown_options(text, [text], inference_context={"input_dtype": text, "shape": [text]})
    read_shown_tensors(text, [text], [], {"input_dtype": text, "device": text})
    repeated_tensor_targets(text, read_shown_tensors(text))
    for start, end, _, items in additions(text):
        assert 0 <= start <= end <= len(text) and items
    options_set_by(text)
    list_items(text)


def _seconds(piece: str, size: int) -> float:
    text = (piece * (size // len(piece) + 1))[:size]
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        read_shown_options(text, [text])
        read_shown_tensors(text, [text], [], {"input_shape": text})
        tensor_targets(text)
        additions(text)
        options_set_by(text)
        list_items(text)
        best = min(best, time.perf_counter() - started)
    return best


def test_the_new_readers_are_linear_in_the_input() -> None:
    pieces = (
        "add `a` ",
        "add a_b and ",
        "x=[",
        "'a': [",
        "Input type (torch.cuda.",
        "x.to(",
        "x.to(a(",
        "x.view(1, ",
        "move the x ",
        "dtype of x is ",
        "x is on ",
        "[a, ",
        "a,",
    )
    for piece in pieces:
        small, large = _seconds(piece, 5_000), _seconds(piece, 200_000)
        assert large < 2.0 and large <= 10 * max(small, 0.05), piece
