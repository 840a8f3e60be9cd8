"""Errors documented on vendors' troubleshooting, FAQ, migration and error-reference pages
for kinds no runbook covered (issue 16, second batch): Lightning's 2.0 upgrade guides and GPU
guide, Ray's out-of-memory guide, TensorFlow Serving, the TF Lite interpreter and
post-training quantization, Flax's error reference, Optax, Hugging Face datasets 4 and the
Hub's rate limits.

Each wording is the message as the page (or the library the page documents) prints it, with
the page cited in a comment; its fix terms are the words of the fix that page documents. It
must be found first over the bundled corpus by lexical retrieval and get an action naming
the fix (:mod:`tests.support.vendor_checks`). Before the runbooks these wordings are for
(76a6f7c) none of the 25 routed; kinds the corpus already had are in
``test_vendor_reference_known_kinds.py``. Dev non-regression (``rca eval --realworld-dev
--suggest --corpus rca/runbooks``, 367 cases, clean exports of 14a3747 without/with the 11
runbooks): fix term in action 222 -> 223, action or reason 247 -> 247, abstained 68 -> 68,
no case lost.
"""

from __future__ import annotations

import pytest

from tests.support.vendor_checks import (
    Wording,
    check_cites_sources,
    check_look_alike_unmatched,
    check_routes_to_its_fix,
)

WORDINGS: tuple[Wording, ...] = (
    # https://lightning.ai/docs/pytorch/stable/home/migration_guide/from_1_8
    Wording(
        "lightning-2-removed-trainer-api",
        "TypeError",
        "Trainer.__init__() got an unexpected keyword argument 'gpus'",
        ("devices=",),
    ),
    Wording(
        "lightning-2-removed-trainer-api",
        "TypeError",
        "Trainer.__init__() got an unexpected keyword argument 'resume_from_checkpoint'",
        ("ckpt_path=",),
    ),
    Wording(
        "lightning-2-removed-trainer-api",
        "TypeError",
        "Trainer.__init__() got an unexpected keyword argument 'auto_select_gpus'",
        ('devices="auto"',),
    ),
    # https://lightning.ai/docs/pytorch/2.0.0/upgrade/from_1_4.html (outputs as attributes,
    # on_train_epoch_end) and
    # https://lightning.ai/forums/t/how-to-concatenate-outputs-on-epoch-end/2074
    Wording(
        "lightning-2-removed-trainer-api",
        "NotImplementedError",
        "Support for `training_epoch_end` has been removed in v2.0.0. `LitClassifier` implements"
        " this method. You can use the `on_train_epoch_end` hook instead. To access outputs,"
        " save them in-memory as instance attributes. You can find migration examples in"
        " https://github.com/Lightning-AI/lightning/pull/16520.",
        ("on_train_epoch_end",),
    ),
    Wording(
        "lightning-2-removed-trainer-api",
        "NotImplementedError",
        "Support for `validation_epoch_end` has been removed in v2.0.0. `LitClassifier`"
        " implements this method. You can use the `on_validation_epoch_end` hook instead. To"
        " access outputs, save them in-memory as instance attributes.",
        ("on_validation_epoch_end",),
    ),
    # https://lightning.ai/docs/pytorch/2.4.0/_sources/accelerators/gpu_intermediate.rst.txt
    Wording(
        "lightning-ddp-interactive-notebook",
        "lightning.fabric.utilities.exceptions.MisconfigurationException",
        "`Trainer(strategy='ddp')` is not compatible with an interactive environment. Run your"
        " code as a script, or choose one of the compatible strategies:"
        " `Trainer(strategy='dp'|'ddp_notebook')`. In case you are spawning processes yourself,"
        " make sure to include the Trainer creation inside the worker function.",
        ("ddp_notebook",),
    ),
    Wording(
        "lightning-ddp-interactive-notebook",
        "RuntimeError",
        "Lightning can't create new processes if CUDA is already initialized. Did you manually"
        " call `torch.cuda.*` functions, have moved the model to the device, or allocated memory"
        " on the GPU any other way? Please remove any such calls, or change the selected"
        " strategy. You will have to restart the Python kernel.",
        ("restart",),
    ),
    # https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html
    Wording(
        "ray-worker-killed-node-memory",
        "ray.exceptions.OutOfMemoryError",
        "Task was killed due to the node running low on memory. Memory on the node (IP:"
        " 10.0.0.12, ID: 8f3c2a) where the task (task ID: 16310a0f, name=preprocess, pid=2345,"
        " memory used=6.10GB) was running was 29.50GB / 31.00GB (0.951613), which exceeds the"
        " memory usage threshold of 0.95. Ray killed this worker (ID: 2c0e4f) because it was the"
        " most recently scheduled task; to see more information about memory usage on this"
        " node, use `ray logs raylet.out -ip 10.0.0.12`.",
        ("num_cpus",),
    ),
    # https://docs.ray.io/en/master/data/how-to-avoid-ooms.html
    Wording(
        "ray-worker-killed-node-memory",
        "none (Ray task error)",
        "Task hungry_hippo failed due to oom. There are infinite oom retries remaining, so the"
        " task will be retried. Error: 2 worker(s) were killed due to the node running low on"
        " memory. Memory on the node (IP: 10.0.0.7, ID: 92edc4) was 110.69GB / 124.35GB"
        " (0.890161)",
        ("num_cpus",),
    ),
    # The TF Serving image's Dockerfile (MODEL_BASE_PATH=/models, MODEL_NAME), raw.githubusercontent
    # .com/tensorflow/serving/master/tensorflow_serving/tools/docker/Dockerfile, and the model
    # server's numbered version directories
    Wording(
        "tf-serving-model-version-directory",
        "none (TensorFlow Serving log)",
        "W tensorflow_serving/sources/storage_path/file_system_storage_path_source.cc:268] No"
        " versions of servable my_model found under base path /models/my_model. Did you forget"
        " to name your leaf directory as a number (eg. '/1/')?",
        ("/1/saved_model.pb",),
    ),
    Wording(
        "tf-serving-model-version-directory",
        "none (TensorFlow Serving log)",
        "E tensorflow_serving/sources/storage_path/file_system_storage_path_source.cc:369]"
        " FileSystemStoragePathSource encountered a file-system access error: Could not find"
        " base path /models/model for servable model",
        ("MODEL_NAME",),
    ),
    # https://www.tensorflow.org/versions/r2.0/api_docs/python/tf/lite/Interpreter.md.txt
    Wording(
        "tflite-interpreter-input-tensor",
        "ValueError",
        "Cannot set tensor: Dimension mismatch. Got 3 but expected 4 for input 0.",
        ("np.expand_dims",),
    ),
    Wording(
        "tflite-interpreter-input-tensor",
        "ValueError",
        "Cannot set tensor: Dimension mismatch. Got 320 but expected 224 for dimension 1 of"
        " input 0.",
        ("resize_tensor_input",),
    ),
    Wording(
        "tflite-interpreter-input-type",
        "ValueError",
        "Cannot set tensor: Got value of type FLOAT64 but expected type FLOAT32 for input 0,"
        " name: serving_default_input_1:0",
        ("np.float32",),
    ),
    # https://www.tensorflow.org/lite/performance/post_training_quantization (integer inputs)
    Wording(
        "tflite-interpreter-input-type",
        "ValueError",
        "Cannot set tensor: Got value of type FLOAT32 but expected type UINT8 for input 0,"
        " name: serving_default_input:0",
        ("quantization",),
    ),
    Wording(
        "tflite-interpreter-tensor-reference",
        "RuntimeError",
        "There is at least 1 reference to internal data in the interpreter in the form of a"
        " numpy array or slice. Be sure to only hold the function returned from tensor() if you"
        " are using raw data access.",
        ("get_tensor",),
    ),
    # https://flax.readthedocs.io/en/v0.8.0/_modules/flax/errors.html
    Wording(
        "flax-linen-variable-collections",
        "flax.errors.ModifyScopeVariableError",
        'Cannot update variable "mean" in "/BatchNorm_0" because collection "batch_stats" is'
        " immutable.",
        ("mutable=['batch_stats']",),
    ),
    Wording(
        "flax-linen-variable-collections",
        "flax.errors.ApplyScopeInvalidVariablesTypeError",
        "The first argument passed to an apply function should be a dictionary of collections."
        " Each collection should be a dictionary with string keys.",
        ("{'params': params}",),
    ),
    Wording(
        "flax-linen-variable-collections",
        "flax.errors.ApplyScopeInvalidVariablesStructureError",
        "Expect the `variables` (first argument) passed to apply() to be a dict with the"
        ' structure {"params": ...}, but got a dict with an extra params layer, i.e.  {"params":'
        ' {"params": ... } }. You should instead pass in your dict\'s ["params"].',
        ("{'params': params}",),
    ),
    Wording(
        "flax-linen-variable-collections",
        "flax.errors.ScopeCollectionNotFound",
        'Tried to access "mean" from collection "batch_stats" in "/BatchNorm_0" but the'
        " collection is empty.",
        ("batch_stats",),
    ),
    Wording(
        "flax-linen-variable-collections",
        "flax.errors.CallCompactUnboundModuleError",
        "Can't call compact methods on unbound modules",
        ("apply",),
    ),
    # https://optax.readthedocs.io/en/latest/getting_started.html; optax/_src/base.py NO_PARAMS_MSG
    Wording(
        "optax-update-needs-params",
        "ValueError",
        "You are using a transformation that requires the current value of parameters, but you"
        " are not passing `params` when calling `update`.",
        ("update(grads, opt_state, params)",),
    ),
    # https://huggingface.co/datasets/mstz/abalone/discussions/1 (datasets 4.0, Parquet route);
    # https://github.com/IBM/unitxt/releases/tag/1.26.1 (4.0 removed trust_remote_code)
    Wording(
        "datasets-loading-script-removed",
        "RuntimeError",
        "Dataset scripts are no longer supported, but found squad_v2.py",
        ("parquet",),
    ),
    Wording(
        "datasets-loading-script-removed",
        "warning (logging)",
        "`trust_remote_code` is not supported anymore. Please check that the Hugging Face"
        " dataset 'org/corpus' isn't based on a loading script and remove `trust_remote_code`."
        " If the dataset is based on a loading script, please ask the dataset author to remove"
        " it and convert it to a standard format like Parquet.",
        ("parquet",),
    ),
    # https://huggingface.co/docs/hub/rate-limits
    Wording(
        "hf-hub-rate-limit",
        "huggingface_hub.errors.HfHubHTTPError",
        "429 Client Error: Too Many Requests for url:"
        " https://huggingface.co/api/models/org/model/revision/main (Request ID: Root=1-69d8)"
        " We had to rate limit your IP (50.17.198.149). To continue using our service, create a"
        " HF account or login to your existing account, and make sure you pass a HF_TOKEN if"
        " you're using the API.",
        ("HF_TOKEN",),
    ),
)

#: slug -> errors of other kinds that the new runbooks' signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "lightning-2-removed-trainer-api": (
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument"
        " 'evaluation_strategy'",
        "TypeError: Trainer.train() got an unexpected keyword argument 'resume_from_checkpoint'",
    ),
    "lightning-ddp-interactive-notebook": (
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with"
        " multiprocessing, you must use the 'spawn' start method",
    ),
    "ray-worker-killed-node-memory": (
        "RuntimeError: DataLoader worker (pid 4321) is killed by signal: Killed.",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    ),
    "tf-serving-model-version-directory": (
        "OSError: SavedModel file does not exist at: /models/my_model/{saved_model.pbtxt|"
        "saved_model.pb}",
        "Poll failed for model directory 'densenet_onnx': failed to open text file for read"
        " densenet_onnx/config.pbtxt: No such file or directory",
    ),
    "tflite-interpreter-input-tensor": (
        'ValueError: Input 0 of layer "dense" is incompatible with the layer: expected axis -1'
        " of input shape to have value 784, but received input with shape (None, 28, 28)",
    ),
    "tflite-interpreter-input-type": (
        "TypeError: Input 'y' of 'Mul' Op has type float32 that does not match type float64 of"
        " argument 'x'.",
    ),
    "tflite-interpreter-tensor-reference": (
        "RuntimeError: Can't call numpy() on Tensor that requires grad. Use"
        " tensor.detach().numpy() instead.",
    ),
    "flax-linen-variable-collections": (
        "flax.errors.ScopeParamShapeError: Initializer expected to generate shape (444, 256) but"
        ' got shape (472, 256) instead for parameter "kernel" in "/Dense_0".',
        "TypeError: JAX arrays are immutable and do not support in-place item assignment.",
    ),
    "optax-update-needs-params": (
        "TypeError: apply_updates() missing 1 required positional argument: 'updates'",
    ),
    "datasets-loading-script-removed": (
        "ValueError: The repository for org/corpus contains custom code which must be executed"
        " to correctly load the dataset. Please pass the argument `trust_remote_code=True` to"
        " allow custom code to be run.",
    ),
    "hf-hub-rate-limit": (
        "huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for"
        " url https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json.",
        "openai.RateLimitError: Error code: 429 - {'error': {'message': 'Rate limit reached'}}",
    ),
}


@pytest.mark.parametrize("wording", WORDINGS, ids=[w.message[:60] for w in WORDINGS])
def test_the_documented_message_routes_to_its_documented_fix(wording: Wording) -> None:
    check_routes_to_its_fix(wording)


@pytest.mark.parametrize(
    ("slug", "text"), [(s, t) for s, texts in LOOK_ALIKES.items() for t in texts]
)
def test_errors_of_other_kinds_do_not_match_the_new_signals(slug: str, text: str) -> None:
    check_look_alike_unmatched(slug, text)


def test_each_new_runbook_cites_public_sources_and_has_signals() -> None:
    check_cites_sources(set(LOOK_ALIKES))


def test_every_new_runbook_has_wordings_and_look_alikes() -> None:
    assert {w.slug for w in WORDINGS} == set(LOOK_ALIKES)
    assert len(LOOK_ALIKES) == 11
