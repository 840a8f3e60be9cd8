"""Runbook steps written in one framework's API say so, and are not the action for another's.

A step whose action names ``torch.``, ``trtexec`` or ``jnp.`` without an ``api`` premise
reaches JAX, TF-TRT or C++ users in PyTorch or TensorRT wording (issue 16). The lint
(:mod:`rca.corpus.api_wording`, names in ``rca/knowledge/framework-api-names.toml``) holds
the bundled corpus to it, and reads any other corpus the same way.
"""

from __future__ import annotations

from pathlib import Path

from rca.corpus.api_wording import load_names, unmarked_steps
from rca.corpus.files import bundled_runbook_dir, load_directory
from rca.suggestion.providers import OfflineProvider
from tests.support.evidence import bundled_runbooks, incident_context


def test_no_bundled_step_names_a_framework_api_without_a_premise_for_it() -> None:
    found = unmarked_steps(load_directory(bundled_runbook_dir()))
    assert not found, "add `api: [...]` to the Applies line of:\n" + "\n".join(map(str, found))


def _runbook(tmp_path: Path, steps: str) -> Path:
    (tmp_path / "gpu-oom.md").write_text(
        f"# Training dies with CUDA out of memory\n\n## Remediation\n\n{steps}\n",
        encoding="utf-8",
    )
    return tmp_path


def test_a_users_corpus_is_linted_the_same_way(tmp_path: Path) -> None:
    steps = (
        "1. **Call `torch.cuda.empty_cache()` between epochs.** Reason: cached blocks.\n"
        "2. **Lower `per_device_train_batch_size`.** Reason: activations shrink.\n"
        "3. **Grow memory on demand (`tf.config.experimental.set_memory_growth`).**"
        " Reason: TF maps all.\n"
        "   Applies: {api: [tensorflow]}\n"
        "4. **Install a PyTorch build for the GPU.** Reason: kernels.\n"
        "   For jax: **Install the `jax[cuda12]` wheels.** Reason: kernels.\n"
        "5. **Use `jnp.bfloat16` with `XLA_PYTHON_CLIENT_PREALLOCATE=false`.** Reason: x.\n"
        "   Applies: {frameworks: [flax]}\n"
        "6. **Move the batch with `.cuda()` and train with `model.fit(...)`.** Reason: y.\n"
        "   Applies: {api: [pytorch]}"
    )
    found = unmarked_steps(load_directory(_runbook(tmp_path, steps)))
    assert [(f.slug, f.step, f.frameworks) for f in found] == [
        ("gpu-oom", 1, ("pytorch",)),
        ("gpu-oom", 6, ("tensorflow",)),
    ]


def test_a_framework_name_inside_a_longer_identifier_is_not_its_api() -> None:
    names, _ = load_names()
    pattern = {entry.framework: entry.pattern for entry in names}["pytorch"]
    assert not pattern.search('Load with `torch_dtype="auto"` from `self.torchscript_path`')
    assert pattern.search("Install the torch wheel for CUDA 12.1")


def test_every_step_kept_neutral_exists_and_names_a_framework() -> None:
    names, neutral = load_names()
    runbooks = bundled_runbooks()
    for key in neutral:
        slug, _, number = key.partition("#")
        assert slug in runbooks, f"{key}: no such runbook"
        steps = runbooks[slug].body.split("## Remediation", 1)[1]
        assert f"\n{number}. **" in steps, f"{key}: no such step"
    flagged_without = unmarked_steps(runbooks.values(), neutral_steps=False)
    excused = {f"{f.slug}#{f.step}" for f in flagged_without}
    assert set(neutral) <= excused, f"kept neutral but names no framework: {set(neutral) - excused}"


# A JAX program on a GPU its jaxlib has no kernels for (the jax frame and XlaRuntimeError
# show the framework); the runbook's first step installs a PyTorch build.
_JAX_NO_KERNEL = (
    "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: no kernel image is available for "
    "execution on the device"
)
_JAX_FRAME = {
    "filename": "/usr/lib/python3.11/site-packages/jax/_src/interpreters/pxla.py",
    "function": "__call__",
    "lineno": 1229,
    "module": "jax._src.interpreters.pxla",
}


def test_a_jax_incident_is_not_told_to_install_a_pytorch_build() -> None:
    ctx = incident_context(_JAX_NO_KERNEL, ("cuda-no-kernel-image-arch", 0.9), frames=[_JAX_FRAME])
    draft = OfflineProvider().suggest(ctx)
    assert "PyTorch" not in draft.action and "torch" not in draft.action.lower()


def test_a_pytorch_incident_still_gets_the_pytorch_build() -> None:
    frame = {**_JAX_FRAME, "filename": "/opt/site-packages/torch/cuda/__init__.py"}
    ctx = incident_context(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        ("cuda-no-kernel-image-arch", 0.9),
        frames=[{**frame, "module": "torch.cuda"}],
    )
    assert "PyTorch build" in OfflineProvider().suggest(ctx).action


# TensorRT through ONNX Runtime in one process, no PyTorch: a TensorRT-only incident.
_TRT_HANDLE = "[TRT] [E] 1: [reformat.cu::operator()::1606] Error Code 1: Cuda Runtime (invalid resource handle)"  # noqa: E501


def test_a_tensorrt_incident_without_pytorch_is_not_told_to_use_torch_buffers() -> None:
    ctx = incident_context(_TRT_HANDLE, ("tensorrt-pycuda-cuda-context", 0.9))
    draft = OfflineProvider().suggest(ctx)
    assert "torch" not in f"{draft.action} {draft.reason}".lower()
