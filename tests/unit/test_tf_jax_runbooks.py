"""TensorFlow, Keras and JAX failures get their own runbooks and their own API's wording
(issue 16 items 4 and 5).

Each kind below is a family of failures that TF/Keras/JAX users hit and that no runbook
covered: standalone ``keras`` mixed with ``tf.keras``, "No gradients provided for any
variable", "Your input ran out of data", a Keras file path that does not exist, XLA without
``ptxas``, and JAX's GPU preallocation. For each: several wordings of the failure (as the
frameworks print it in different releases and as users report it) match the runbook's
signals and get its step, worded for the framework; look-alikes do not match. Environment
variables that only one framework reads (``XLA_PYTHON_CLIENT_PREALLOCATE``) say which
framework's wording an incident gets, and ``TF_CPP_MIN_LOG_LEVEL`` (which JAX's own warning
prints) says nothing. The wordings are the frameworks' and users' phrasings, not a case's.
"""

from __future__ import annotations

import pytest

from ingest.parsing.logs import parse_logs
from rca.corpus.files import match_signals
from rca.suggestion.context import AnalysisContext
from rca.suggestion.incident_setting import frameworks_in
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.validation import validate
from tests.support.evidence import bundled_runbooks, evidence

#: slug -> (error type, message) wordings of the failure the runbook is for.
WORDINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "keras-standalone-vs-tf-keras": (
        (
            "ValueError",
            "Could not interpret optimizer identifier: <tensorflow.python.keras.optimizer_v2"
            ".adam.Adam object at 0x7f06fa323d90>",
        ),
        (
            "ValueError",
            "('Could not interpret optimizer identifier:', <keras_adamw.optimizers_v2.AdamW"
            " object at 0x0000021E2F81D220>)",
        ),
        (
            "TypeError",
            "The added layer must be an instance of class Layer. Found:"
            " <tensorflow.python.keras.layers.core.Dense object at 0x7f2b1c0d9e10>",
        ),
        ("ValueError", "Could not interpret loss function identifier: <function focal_loss>"),
    ),
    "tf-no-gradients-provided": (
        (
            "ValueError",
            "No gradients provided for any variable: ['dense/kernel:0', 'dense/bias:0']",
        ),
        (
            "ValueError",
            "No gradients provided for any variable: (['conv2d/kernel:0', 'conv2d/bias:0'],)."
            " Provided `grads_and_vars` is ((None, <tf.Variable 'conv2d/kernel:0'>),).",
        ),
        (
            "none (TensorFlow warning)",
            "WARNING:tensorflow:Gradients do not exist for variables ['dense_1/kernel:0'] when"
            " minimizing the loss.",
        ),
    ),
    "tf-input-ran-out-of-data": (
        (
            "none (TensorFlow warning)",
            "WARNING:tensorflow:Your input ran out of data; interrupting training. Make sure"
            " that your dataset or generator can generate at least `steps_per_epoch * epochs`"
            " batches (in this case, 2500 batches). You may need to use the repeat() function"
            " when building your dataset.",
        ),
        ("UserWarning", "Your input ran out of data; interrupting training."),
    ),
    "keras-load-model-path-not-found": (
        (
            "OSError",
            "SavedModel file does not exist at: best_model.hdf5/{saved_model.pbtxt|saved_model.pb}",
        ),
        ("OSError", "No file or directory found at ./checkpoints/final_model.h5"),
        (
            "ValueError",
            "File format not supported: filepath=exported_model. Keras 3 only supports V3"
            " `.keras` files and legacy H5 format files (`.h5` extension).",
        ),
    ),
    "xla-ptxas-not-found": (
        ("none (XLA compile error)", "Couldn't invoke ptxas --version"),
        (
            "InternalError",
            "Couldn't get ptxas version string: INTERNAL: Couldn't invoke ptxas --version",
        ),
        (
            "none (XLA warning)",
            "Can't find ptxas binary in ${CUDA_DIR}/bin.  Will back to the GPU driver for PTX"
            " -> sass compilation.",
        ),
        (
            "none (XLA error)",
            "Can't find libdevice directory ${CUDA_DIR}/nvvm/libdevice. This may result in"
            " compilation or runtime failures",
        ),
    ),
    "jax-gpu-memory-preallocation": (
        (
            "none (GPU memory held)",
            "jax preallocates 90% of GPU memory even though I set"
            " os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'] = 'false'",
        ),
        (
            "none (GPU memory held)",
            "Setting XLA_PYTHON_CLIENT_MEM_FRACTION=.10 has no effect, nvidia-smi still shows"
            " 22GiB used by python",
        ),
        (
            "none (GPU memory held)",
            "JAX reserves 75% of the GPU at start, so the PyTorch model on the same GPU runs"
            " out of memory",
        ),
    ),
}

#: slug -> failures that look alike and are another kind: the runbook's signals stay silent.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "keras-standalone-vs-tf-keras": (
        "ValueError: Unknown optimizer: AdamW. Please ensure this object is passed to the"
        " `custom_objects` argument.",
        "ValueError: Argument(s) not recognized: {'lr': 0.001}",
    ),
    "tf-no-gradients-provided": (
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
        "InvalidArgumentError: Gradient for sqrt : Tensor had NaN values",
    ),
    "tf-input-ran-out-of-data": (
        "ValueError: Data cardinality is ambiguous: x sizes: 1000 y sizes: 999",
        "RuntimeError: DataLoader worker (pid 5123) exited unexpectedly",
    ),
    "keras-load-model-path-not-found": (
        "OSError: Unable to load weights saved in HDF5 format into a subclassed Model",
        "ValueError: Unknown layer: TrigPosEmbedding",
    ),
    "xla-ptxas-not-found": (
        "No GPU/TPU found, falling back to CPU.",
        "XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed.",
    ),
    "jax-gpu-memory-preallocation": (
        "XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6.27GiB",
        "ResourceExhaustedError: OOM when allocating tensor with shape[64,512,512]",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    ),
}

#: slug -> words the chosen action has for every wording (the fix in the framework's API).
ACTION_TERMS: dict[str, tuple[str, ...]] = {
    "keras-standalone-vs-tf-keras": ("tensorflow.keras",),
    "tf-no-gradients-provided": ("GradientTape",),
    "tf-input-ran-out-of-data": ("steps_per_epoch",),
    "keras-load-model-path-not-found": ("path",),
    "xla-ptxas-not-found": ("ptxas",),
    "jax-gpu-memory-preallocation": ("XLA_PYTHON_CLIENT_PREALLOCATE", "import jax"),
}

_CASES = [(slug, w) for slug, wordings in WORDINGS.items() for w in wordings]


def _ctx(slug: str, error_type: str, message: str, logs: tuple[str, ...] = ()) -> AnalysisContext:
    return AnalysisContext(
        error_type=error_type,
        message=message,
        logs=parse_logs(logs),
        evidence=evidence((slug, 0.9)),
    )


@pytest.mark.parametrize(
    ("slug", "wording"), _CASES, ids=[f"{s}-{i}" for i, (s, _) in enumerate(_CASES)]
)
def test_every_wording_matches_its_runbook_and_gets_its_fix(slug: str, wording: tuple[str, str]):
    error_type, message = wording
    runbook = bundled_runbooks()[slug]
    assert match_signals(runbook, f"{error_type}: {message}"), message
    draft = OfflineProvider().suggest(_ctx(slug, error_type, message))
    assert draft.runbook == slug
    for term in ACTION_TERMS[slug]:
        assert term in draft.action, (message, draft.action)
    assert "torch" not in draft.action.lower(), draft.action


@pytest.mark.parametrize(
    ("slug", "text"), [(s, t) for s, texts in LOOK_ALIKES.items() for t in texts]
)
def test_look_alikes_do_not_match(slug: str, text: str) -> None:
    assert not match_signals(bundled_runbooks()[slug], text), text


def test_the_new_kinds_are_worded_for_their_framework_and_cite_sources() -> None:
    runbooks = bundled_runbooks()
    for slug in WORDINGS:
        rb = runbooks[slug]
        assert rb.sources and all(s.startswith("https://") for s in rb.sources), slug
        assert set(rb.frameworks) & {"tensorflow", "keras", "jax"}, slug


#: Environment variables as messages and logs print them, and the framework each names.
ENV_LINES: tuple[tuple[str, str], ...] = (
    ("I tried `XLA_PYTHON_CLIENT_PREALLOCATE=false` but nothing changed", "jax"),
    ("export XLA_PYTHON_CLIENT_MEM_FRACTION=.7", "jax"),
    ("JAX_PLATFORMS=cpu python train.py", "jax"),
    ("os.environ['JAX_ENABLE_X64'] = 'True'", "jax"),
    ("set TF_FORCE_GPU_ALLOW_GROWTH=true before starting", "tensorflow"),
    (
        "If the cause is memory fragmentation maybe the environment variable"
        " 'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation.",
        "tensorflow",
    ),
    ("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "pytorch"),
)
#: Look-alikes: variables every framework's users set, or that JAX itself tells users to set.
ENV_LOOK_ALIKES: tuple[str, ...] = (
    "No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
    "CUDA_VISIBLE_DEVICES=0,1 python run.py",
    "export LD_LIBRARY_PATH=/usr/local/cuda/lib64",
    "NCCL_DEBUG=INFO",
    "the variable MY_TORCH_HOME is unset",
    "xla_python_client_preallocate in lower case is prose, not a variable",
)


@pytest.mark.parametrize(("line", "framework"), ENV_LINES)
def test_a_framework_only_environment_variable_names_its_framework(line: str, framework: str):
    assert frameworks_in([line]) == {framework}, line


@pytest.mark.parametrize("line", ENV_LOOK_ALIKES)
def test_shared_environment_variables_name_no_framework(line: str) -> None:
    assert not frameworks_in([line]), line


_CUDNN_INIT = (
    "UnknownError",
    "Failed to get convolution algorithm. This is probably because cuDNN failed to initialize,"
    " so try looking to see if a warning log message was printed above.",
)


@pytest.mark.parametrize(
    "line",
    [
        "os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'] = 'false'",
        "XLA_PYTHON_CLIENT_MEM_FRACTION=.8 python train.py",
    ],
)
def test_an_incident_that_sets_jax_variables_gets_the_jax_wording(line: str) -> None:
    """Metamorphic: the same cuDNN-initialisation failure, with nothing but a JAX environment
    variable in its logs, gets the memory-growth step in JAX's words, not TensorFlow's."""
    plain = _ctx("tf-gpu-memory-growth-cudnn-init", *_CUDNN_INIT)
    jax = _ctx("tf-gpu-memory-growth-cudnn-init", *_CUDNN_INIT, logs=(line,))
    before, after = rank_steps(plain), rank_steps(jax)
    assert "jax" in read_premises(jax).frameworks
    assert after[0].position == before[0].position
    assert "XLA_PYTHON_CLIENT" in after[0].action
    assert "set_memory_growth" not in after[0].action


def test_jax_preallocation_steps_are_ruled_out_for_a_tensorflow_only_incident() -> None:
    """A step written for JAX only is contradicted when the incident's code is TensorFlow's;
    restating it fails validation."""
    tf_only = _ctx(
        "jax-gpu-memory-preallocation",
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError",
        "OOM when allocating tensor with shape[32,1024,1024] on /job:localhost/device:GPU:0",
    )
    assert read_premises(tf_only).frameworks == {"tensorflow"}
    assert all("import jax" not in c.action for c in rank_steps(tf_only))
    draft = Draft(
        "Set `XLA_PYTHON_CLIENT_PREALLOCATE=false` in the shell, or in `os.environ` at the very"
        " top of the script before `import jax` and any library that imports it.",
        "JAX reads them once when its GPU backend starts.",
        "jax-gpu-memory-preallocation",
        0.5,
        "test",
        "test",
    )
    assert not validate(draft, tf_only).premises_ok


@pytest.mark.parametrize(
    ("error_type", "message"),
    [
        (
            "tensorflow.python.framework.errors_impl.InvalidArgumentError",
            "Negative dimension size caused by subtracting 3 from 1 for"
            " '{{node conv2d_4/Conv2D}}' with input shapes: [?,1,1,256], [3,3,256,512].",
        ),
        (
            "ValueError",
            "Exception encountered when calling layer 'max_pooling2d_3' (type MaxPooling2D)."
            " Computed output size would be negative. Received `inputs shape=(None, 1, 1, 64)`."
            " File /usr/lib/python3/site-packages/keras/src/layers/pooling/base_pooling.py",
        ),
    ],
)
def test_a_keras_input_smaller_than_the_kernel_is_resized_with_tensorflow(
    error_type: str, message: str
) -> None:
    ctx = _ctx("conv-input-smaller-than-kernel", error_type, message)
    assert "tensorflow" in read_premises(ctx).frameworks
    action = OfflineProvider().suggest(ctx).action
    assert "tf.image.resize" in action or "Resizing" in action, action
    assert "transforms.Resize" not in action and "torch" not in action.lower(), action
