"""An answer whose target is what the message shows failing fails validation (issue 16).

"Flatten the input to shape [238]" when it says it got [238], "import Adam from" the
module whose ``Adam`` object it could not interpret, "prepend the cuDNN 8.4.1 folder" when the
runtime 8.4.1 is the mismatch, ``device_map='cpu'`` when modules dispatched on the CPU are the
failure. Right answers to the same messages, in other wordings, keep passing; so does one that
names the failing value as the one it replaces. The same readings hold for other names and
numbers (the metamorphic variants below are written for these tests, not taken from a case).
"""

from __future__ import annotations

import pytest

from rca.suggestion.failing_values import read_failing_values
from rca.suggestion.reused_failing import reused_failing
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

SLUG = "checkpoint-keys-module-prefix"
TRITON = dev_case("rb043")["message"]
KERAS = dev_case("re009")["message"]
CUDNN = dev_case("rl002")["message"]
BNB = dev_case("ro001")["message"]
#: Other names and numbers in the same wordings.
KERAS_SHAPE = (
    'ValueError: Input 0 of layer "dense" is incompatible with the layer: expected'
    " shape=(None, 784), found shape=(784,)"
)
TORCH_OBJECT = (
    "TypeError: Could not interpret optimizer identifier:"
    " <torch.optim.adamw.AdamW object at 0x7f3a2c1b9d90>"
)
CUBLAS = (
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (9, 1, 0)"
    " but found runtime version (8, 9, 2)."
)
ACCELERATE = dev_case("rg008")["message"]
LIGHTNING = "TypeError: Trainer.__init__() got an unexpected keyword argument 'auto_select_gpus'"
KERAS_ARGS = "ValueError: Argument(s) not recognized: {'lr': 0.002}"
ARGPARSE = "train.py: error: unrecognized arguments: --fp16_opt_level O2"
JAXLIB = (
    "RuntimeError: jaxlib is version 0.3.25, but this version of jax requires version >= 0.4.6."
)
DISK = (
    "ValueError: Some layers are offloaded to the disk. Make sure you have enough GPU RAM;"
    " you need to set `offload_state_dict=True` to dispatch them there."
)


def _complaints(message: str, action: str) -> list[str]:
    return validate(draft(action, SLUG), message_context(message, (SLUG, 0.9))).complaints


def _flags(message: str, action: str) -> bool:
    return bool(reused_failing(action, read_failing_values(message)))


@pytest.mark.parametrize(
    ("message", "action", "says"),
    [
        (TRITON, "Flatten the input to shape [238] before sending it.", "shape [238]"),
        (KERAS, "Import Adam from tensorflow.python.keras.optimizers.", "Adam object"),
        (CUDNN, "Prepend the cuDNN 8.4.1 library folder to LD_LIBRARY_PATH.", "8.4.1"),
        (BNB, "Pass device_map='cpu' to from_pretrained.", "placed on the cpu"),
    ],
)
def test_the_failing_value_as_the_target_fails_validation(message, action, says):
    complaints = _complaints(message, action)
    assert any(says in complaint for complaint in complaints), complaints


@pytest.mark.parametrize(
    ("message", "action"),
    [
        (TRITON, "Reshape the array to (1, 238) before building InferInput."),
        (TRITON, "Send the input with a leading batch dimension, shape [1, 238]."),
        (TRITON, "Change the input from shape [238] to [1, 238]."),
        (KERAS, "Import the model, layers and Adam all from tensorflow.keras."),
        (KERAS, "Use keras.optimizers.Adam when the model is built with standalone keras."),
        (KERAS, "Replace tensorflow.python.keras.optimizers.Adam with keras.optimizers.Adam."),
        (CUDNN, "Remove the directory with cuDNN 8.4.1 from LD_LIBRARY_PATH."),
        (CUDNN, "Install cuDNN 8.5.0 in place of 8.4.1 in the CUDA library directory."),
        (CUDNN, "Upgrade cuDNN from 8.4.1 to 8.5.0."),
        (BNB, "Load the quantized model with device_map={'': 0} so every module sits on the GPU."),
        (
            BNB,
            "Set llm_int8_enable_fp32_cpu_offload=True in BitsAndBytesConfig and pass a"
            " custom device_map.",
        ),
    ],
)
def test_right_answers_to_the_same_messages_keep_passing(message, action):
    assert not _flags(message, action)
    assert validate(draft(action, SLUG), message_context(message, (SLUG, 0.9))).premises_ok


@pytest.mark.parametrize(
    ("message", "action", "harmful"),
    [
        (KERAS_SHAPE, "Reshape the input to (784,) before calling the model.", True),
        (KERAS_SHAPE, "Reshape the input to (1, 784) before calling the model.", False),
        (TORCH_OBJECT, "Import AdamW from torch.optim.adamw and pass it to compile.", True),
        (TORCH_OBJECT, "Use keras.optimizers.AdamW with the Keras model.", False),
        (CUBLAS, "Install cuDNN 8.9.2 system-wide.", True),
        (CUBLAS, "Install cuDNN 9.1.0 system-wide.", False),
        (CUBLAS, "Do not install cuDNN 8.9.2; let PyTorch load its bundled cuDNN.", False),
        (ACCELERATE, "Set dispatch_batches=False when creating the Accelerator.", True),
        (ACCELERATE, "Remove dispatch_batches from the Accelerator call.", False),
        (
            ACCELERATE,
            "Downgrade accelerate to 0.34.2, which still accepts dispatch_batches.",
            False,
        ),
        (ACCELERATE, "Downgrade accelerate to 0.34.2 and pass dispatch_batches=False.", False),
        (
            "TypeError: MyTrainer.compute_loss() got an unexpected keyword argument 'num_items'",
            "Add it to the override: `def compute_loss(self, model, inputs, num_items=None):`.",
            False,
        ),
        (LIGHTNING, "Pass auto_select_gpus=True to the Trainer.", True),
        (
            LIGHTNING,
            'Replace the removed flag: `auto_select_gpus=True` becomes `devices="auto"`.',
            False,
        ),
        (LIGHTNING, 'Use devices="auto" instead of auto_select_gpus=True.', False),
        (KERAS_ARGS, "Pass `lr=0.001` to Adam.", True),
        (KERAS_ARGS, "Use learning_rate=0.002 instead of lr.", False),
        (ARGPARSE, "Run train.py with --fp16_opt_level O1.", True),
        (ARGPARSE, "Drop --fp16_opt_level from the command.", False),
        (JAXLIB, "Pin jaxlib==0.3.25.", True),
        (JAXLIB, "Upgrade jaxlib from 0.3.25 to 0.4.7.", False),
        (JAXLIB, "Install jaxlib 0.4.6 (currently 0.3.25).", False),
        # a matched older pair moves the requiring package too (re-review regressions)
        (JAXLIB, "Pin a matched older pair: pip install jax==0.3.25 jaxlib==0.3.25.", False),
        (JAXLIB, "Downgrade jax to 0.3.25 so it matches the installed jaxlib 0.3.25.", False),
        (JAXLIB, "pip install 'jaxlib==0.3.25' --force-reinstall", True),
        (CUDNN, "Put the cuDNN runtime 8.4.1 first on LD_LIBRARY_PATH.", True),
        # Triton's config dims leave the batch axis out: [238] there is no input shape
        (TRITON, "Keep dims: [238] in config.pbtxt and send the input as shape [1, 238].", False),
        (TRITON, "Send the input as shape [238].", True),
        (DISK, "Set device_map='disk'.", True),
        (DISK, "Set device_map='disk' and offload_state_dict=True.", False),
    ],
)
def test_other_names_and_numbers_are_read_the_same_way(message, action, harmful):
    assert _flags(message, action) == harmful


def test_the_custom_value_the_message_advises_is_no_repeat_of_the_shown_one():
    """``device_map="auto"`` is shown set; "a custom `device_map`" sets another value."""
    complaints = _complaints(BNB, "Pass a custom device_map that keeps every layer on GPU 0.")
    assert not any("already set" in complaint for complaint in complaints), complaints


def test_reading_is_linear():
    def read(size: int) -> object:
        message = ("expected [1, got [" + "<a.b object at 0x1 dispatched on the cpu ") * size
        action = "Set device=cpu to [1, 2] import b from a " * size
        return reused_failing(action, read_failing_values(message))

    assert_linear(read, 20, 400)
