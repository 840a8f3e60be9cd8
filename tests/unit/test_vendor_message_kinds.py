"""More vendor error messages route to the runbook written for their kind (issue 16 item 5).

The runbooks below were written from the vendors' own documentation (their ``sources``) for
failure kinds the dev set showed missing, or extended with the vendor's wording of a kind
they already covered. For each, the error as the library prints it, sent as a bare
incident, must be found first over the whole bundled corpus by lexical retrieval (BM25 and
the signal prior; no embedding model in unit tests), and the offline provider, given what
retrieval found, must suggest that runbook's documented fix in the library's own terms.
Errors of other kinds that share words with them must not match the new signals.
"""

from __future__ import annotations

import pytest

from rca.corpus.files import Runbook, match_signals
from rca.suggestion.validation import validate
from tests.support.evidence import bundled_runbooks
from tests.support.vendor_routing import route_message

#: slug -> (error type, message) as the vendors print them.
WORDINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "triton-kernel-out-of-resources": (
        (
            "triton.runtime.autotuner.OutOfResources",
            "out of resource: shared memory, Required: 196608, Hardware limit: 101376."
            " Reducing block sizes or `num_stages` may help.",
        ),
    ),
    "triton-kernel-pointer-device": (
        ("ValueError", "Pointer argument (at 2) cannot be accessed from Triton (cpu tensor?)"),
    ),
    "windows-native-dll-load-failed": (
        (
            "ImportError",
            "DLL load failed while importing onnxruntime_pybind11_state: The specified module"
            " could not be found.",
        ),
        (
            "OSError",
            "[WinError 126] The specified module could not be found. Error loading"
            ' "C:\\Python310\\lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.',
        ),
    ),
    "onnxruntime-cpu-memory-arena": (
        (
            "none (memory growth)",
            "ONNX Runtime memory usage keeps growing with every InferenceSession.run() on CPU",
        ),
    ),
    "flax-param-shape-mismatch": (
        (
            "flax.errors.ScopeParamShapeError",
            "Initializer expected to generate shape (444, 256) but got shape (472, 256) instead"
            ' for parameter "kernel" in "/Dense_0".',
        ),
    ),
    "peft-merge-unload-not-peft-model": (
        ("AttributeError", "'MistralForCausalLM' object has no attribute 'merge_and_unload'"),
    ),
    "keras-h5py3-string-decode": (("AttributeError", "'str' object has no attribute 'decode'"),),
    "torch-embedding-weight-shape": (("RuntimeError", "'weight' must be 2-D"),),
    "tensorrt-python-package-missing": (("ModuleNotFoundError", "No module named 'tensorrt'"),),
    "zero3-checkpoint-consolidation": (
        (
            "deepspeed.runtime.zero.utils.ZeRORuntimeException",
            "The checkpoint being loaded used a DP world size of 8 but the current world size is"
            " 16. Automatic adjustment of ZeRO's optimizer state partitioning with a new world"
            " size is not currently supported.",
        ),
    ),
    "tgi-shard-cannot-start": (
        ("Error", "Download process was signaled to shutdown with signal 7"),
    ),
    "attention-flash-attention-unavailable": (
        (
            "warning (logging)",
            "WARNING text_generation_launcher: Could not import Flash Attention enabled models:"
            " GPU with CUDA capability 7 0 is not supported",
        ),
    ),
}

#: slug -> words every wording's suggested action holds (the documented fix's own terms).
ACTION_TERMS: dict[str, tuple[str, ...]] = {
    "triton-kernel-out-of-resources": ("num_stages",),
    "triton-kernel-pointer-device": ("torch.cuda.device",),
    "windows-native-dll-load-failed": ("Visual C++ Redistributable",),
    "onnxruntime-cpu-memory-arena": ("enable_cpu_mem_arena = False",),
    "flax-param-shape-mismatch": ("configuration",),
    "peft-merge-unload-not-peft-model": ("PeftModel",),
    "keras-h5py3-string-decode": ("Keras",),
    "torch-embedding-weight-shape": ("F.embedding(indices, weight)",),
    "tensorrt-python-package-missing": ("pip install tensorrt",),
    "zero3-checkpoint-consolidation": ("zero_to_fp32",),
    "tgi-shard-cannot-start": ("--shm-size",),
    "attention-flash-attention-unavailable": ("Ignore",),
}

#: slug -> errors of other kinds that the runbook's signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "triton-kernel-out-of-resources": (
        "RuntimeError: DataLoader worker (pid 123) is killed by signal: Bus error. It is possible"
        " that dataloader's workers are out of shared memory.",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    ),
    "triton-kernel-pointer-device": (
        "RuntimeError: Expected all tensors to be on the same device, but found at least two"
        " devices, cuda:0 and cpu!",
    ),
    "windows-native-dll-load-failed": (
        "ImportError: cannot import name 'soft_unicode' from 'markupsafe'",
        "OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
    ),
    "onnxruntime-cpu-memory-arena": (
        "BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size"
        " 1073741824",
    ),
    "flax-param-shape-mismatch": (
        "ValueError: Incompatible shapes for broadcasting: shapes=[(1, 128), (64,)]",
    ),
    "peft-merge-unload-not-peft-model": (
        "AttributeError: 'LlamaForCausalLM' object has no attribute 'module'",
    ),
    "keras-h5py3-string-decode": ("AttributeError: 'str' object has no attribute 'shape'",),
    "torch-embedding-weight-shape": ("IndexError: index out of range in self",),
    "tensorrt-python-package-missing": (
        "ModuleNotFoundError: No module named 'tensorrt_llm'",
        "ModuleNotFoundError: No module named 'torch_tensorrt'",
    ),
}

_CASES = [(slug, w) for slug, wordings in WORDINGS.items() for w in wordings]
_IDS = [f"{slug}-{i}" for i, (slug, _) in enumerate(_CASES)]


@pytest.mark.parametrize(("slug", "wording"), _CASES, ids=_IDS)
def test_the_vendor_message_routes_to_its_runbook_and_gets_its_fix(
    slug: str, wording: tuple[str, str]
) -> None:
    found, ctx, draft = route_message(*wording)
    assert found[0].slug == slug, [r.slug for r in found]
    assert draft.runbook == slug, (draft.runbook, draft.action)
    for term in ACTION_TERMS[slug]:
        assert term in draft.action, (wording[1], draft.action)
    assert validate(draft, ctx).ok, validate(draft, ctx).complaints


@pytest.mark.parametrize(
    ("slug", "text"), [(s, t) for s, texts in LOOK_ALIKES.items() for t in texts]
)
def test_errors_of_other_kinds_do_not_match_the_signals(slug: str, text: str) -> None:
    assert not match_signals(bundled_runbooks()[slug], text), text


def test_each_runbook_cites_public_sources_and_has_signals() -> None:
    runbooks: dict[str, Runbook] = bundled_runbooks()
    for slug in WORDINGS:
        rb = runbooks[slug]
        assert rb.sources and all(s.startswith("https://") for s in rb.sources), slug
        assert rb.signals, slug
